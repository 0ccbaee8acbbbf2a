import { expect } from 'chai';
import { PNG } from 'pngjs';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { startDocCorpusServer } from '../../support/doc-corpus.ts';
import type { FixtureServer } from '../../support/fixture-server.ts';
import { sharedRenderer } from '../../support/harness.ts';
import { pixelSimilarity } from '../../support/pixels.ts';

/** Pages with no consent notice: removeAds may hide nothing of them. */
const CORPUS = [
  '/python/index.html',
  '/python/library/functions.html',
  '/python/tutorial/introduction.html',
  '/python/library/os.html',
  '/node/index.html',
  '/node/fs.html',
  '/node/http.html',
  ...[
    'album', 'blog', 'cheatsheet', 'checkout', 'cover', 'dashboard', 'footers', 'headers', 'heroes', 'modals',
    'navbar-bottom', 'navbar-fixed', 'offcanvas-navbar', 'pricing', 'sticky-footer', 'sticky-footer-navbar',
  ].map((name) => `/bootstrap/examples/${name}/`),
  '/article',
];

describe('removeAds on pages without a consent notice (Python and Node.js docs, Bootstrap examples, an article)', function () {
  this.timeout(600_000);
  let renderer: Renderer;
  let corpus: FixtureServer;

  before(async () => {
    [renderer, corpus] = await Promise.all([sharedRenderer(), startDocCorpusServer()]);
  });
  after(() => corpus.close());

  for (const pagePath of CORPUS) {
    it(`${pagePath}: removeAds:true matches removeAds:false at >= 0.99 completeness`, async () => {
      // The same fixed wait for both, so that only removeAds differs between them.
      const [untouched, cleaned] = await Promise.all(
        [false, true].map(async (removeAds) => {
          const result = await renderer.capture({ url: corpus.url(pagePath), quality: 'standard', fullPage: false, removeAds, wait: 1000 });
          return PNG.sync.read(result.image);
        }),
      );
      expect(pixelSimilarity(untouched!, cleaned!)).to.be.at.least(0.99);
    });
  }
});
