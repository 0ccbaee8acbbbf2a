import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { brokenLinks, githubSlug, headingAnchors, isRelative, links } from '../support/markdown-links.ts';

const root = path.join(import.meta.dirname, '..', '..');
const docsPages = readdirSync(path.join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);

describe('documentation links (README.md and docs/*.md)', () => {
  it('every relative link resolves to a file in the repository, and every #anchor to one of its headings', () => {
    const files = ['README.md', ...docsPages];
    const relative = files.flatMap((file) => links(readFileSync(path.join(root, file), 'utf8')).filter((link) => isRelative(link.target)));
    expect(relative.length, 'relative links found').to.be.greaterThan(files.length);
    expect(brokenLinks(root, files)).to.deep.equal([]);
  });

  it('the README links to every page in docs/', () => {
    const linked = new Set(links(readFileSync(path.join(root, 'README.md'), 'utf8')).map((link) => link.target.replace(/#.*$/, '')));
    expect(docsPages.filter((page) => !linked.has(page))).to.deep.equal([]);
  });

  describe('the checker', () => {
    it('gives headings the anchors GitHub gives them', () => {
      const markdown = [
        '# Hosted mode (`MODE=hosted`)',
        '## `POST /screenshot`',
        '### Removing ads, banners and pop-ups',
        '## Performance (measured, not promised)',
        '## Café & Crème',
        '## snake_case_name and _emphasis_',
        '## [The API](api.md) reference ##',
        '## Probes',
        '## Probes',
        '```sh',
        '# a comment in code, not a heading',
        '```',
        '## Probes',
      ].join('\n');
      expect(headingAnchors(markdown)).to.deep.equal([
        'hosted-mode-modehosted',
        'post-screenshot',
        'removing-ads-banners-and-pop-ups',
        'performance-measured-not-promised',
        'café--crème',
        'snake_case_name-and-emphasis',
        'the-api-reference',
        'probes',
        'probes-1',
        'probes-2',
      ]);
      expect(githubSlug('Operations: scaling, metrics, alerts, logs')).to.equal('operations-scaling-metrics-alerts-logs');
    });

    describe('on a small repository', () => {
      let dir: string;
      before(() => {
        dir = mkdtempSync(path.join(tmpdir(), 'viewfinder-links-'));
        mkdirSync(path.join(dir, 'docs'));
        writeFileSync(path.join(dir, 'docs', 'api.md'), '# API\n\n## Errors\n');
        writeFileSync(path.join(dir, 'main.ts'), '');
        writeFileSync(
          path.join(dir, 'README.md'),
          [
            '# Readme',
            '[errors](docs/api.md#errors) [code](main.ts#L1) [self](#readme) [web](https://example.com/x.md)',
            '[a link whose text',
            'wraps](docs/missing.md)',
            '[bad anchor](docs/api.md#probes) `[in code](docs/nowhere.md)`',
            '[shared](../shared/SPEC.md)',
            '```md',
            '[in a fence](docs/nowhere.md)',
            '```',
            '[ref]: docs/gone.md',
            '<a href="main.ts#top">html</a>',
          ].join('\n'),
        );
      });
      after(() => rmSync(dir, { recursive: true, force: true }));

      it('reports a missing file, a missing heading, a path outside the repository and a bad anchor on a non-Markdown file, and nothing in code', () => {
        expect(brokenLinks(dir, ['README.md'])).to.deep.equal([
          'README.md:3: docs/missing.md: docs/missing.md does not exist',
          'README.md:5: docs/api.md#probes: #probes is not a heading of docs/api.md',
          'README.md:6: ../shared/SPEC.md: points outside the repository',
          'README.md:10: docs/gone.md: docs/gone.md does not exist',
          'README.md:11: main.ts#top: #top is not a line anchor and main.ts is not Markdown',
        ]);
      });
    });
  });
});
