import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The relative links of Markdown files and the anchors GitHub gives their headings, so that a test
 * can show that the README and docs/ never point at a file or a section that is not there.
 * Only what GitHub renders counts: links and headings inside code are text.
 */

export interface Link {
  /** 1-based line of the link in its file. */
  line: number;
  /** The destination as written, e.g. `docs/api.md#errors`. */
  target: string;
}

/** The text with fenced code blocks blanked out, keeping every line break. */
function outsideFences(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  const kept = lines.map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== undefined) {
      // A fence closes with at least as many of the same character and nothing else on the line.
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      return '';
    }
    return line;
  });
  return kept.join('\n');
}

/** The text with code spans blanked out too, keeping every offset: what can hold a link. */
const prose = (markdown: string) => outsideFences(markdown).replace(/(`+)[^`][\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));

const lineOf = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

/** Every link destination in the file: inline links and images, reference definitions, HTML href and src. */
export function links(markdown: string): Link[] {
  const text = prose(markdown);
  const patterns = [
    /!?\[[^\]]*\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g, // [text](target "title"); text may wrap lines
    /^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s<>]+)>?/gm, // [label]: target
    /\b(?:href|src)\s*=\s*["']([^"']+)["']/g, // <a href="target">
  ];
  const found: Link[] = [];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) found.push({ line: lineOf(text, match.index), target: match[1] ?? '' });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Links that stay inside the repository: no scheme (`https:`, `mailto:`) and no `//host`. */
export const isRelative = (target: string) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('//');

/** The text a heading renders as: code spans keep their content; links keep their text; tags and emphasis go. */
function renderedText(heading: string): string {
  return heading
    .split(/(`+[^`]*`+)/)
    .map((part, index) =>
      index % 2 === 1
        ? part.replace(/^`+|`+$/g, '')
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
            .replace(/<[^>]*>/g, '')
            .replace(/(^|[^\p{L}\p{N}])_+(?=[\p{L}\p{N}])|(?<=[\p{L}\p{N}])_+(?=[^\p{L}\p{N}_]|$)/gu, '$1'),
    )
    .join('')
    .trim();
}

/**
 * GitHub's slug for a heading's text, as github-slugger computes it: lower case, every character that
 * is not a letter, mark, number, connector (`_`), space or hyphen dropped, spaces made hyphens.
 */
export const githubSlug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** The anchors of a file's ATX headings, in order; a repeated slug gets -1, -2... as on GitHub. */
export function headingAnchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  for (const line of outsideFences(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (!heading) continue;
    const base = githubSlug(renderedText(heading[1] ?? ''));
    let anchor = base;
    while (seen.has(anchor)) {
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      anchor = `${base}-${count}`;
    }
    seen.set(anchor, 0);
    anchors.push(anchor);
  }
  return anchors;
}

/**
 * What is wrong with the relative links of `files` (paths relative to `root`), one line each as
 * `file:line: target: problem`; empty when every link resolves. A path starting with `/` is taken
 * from the repository's root, as GitHub does.
 */
export function brokenLinks(root: string, files: string[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const markdown = readFileSync(path.join(root, file), 'utf8');
    for (const { line, target } of links(markdown).filter((link) => isRelative(link.target))) {
      const problem = linkProblem(root, file, target);
      if (problem) problems.push(`${file}:${line}: ${target}: ${problem}`);
    }
  }
  return problems;
}

function linkProblem(root: string, file: string, target: string): string | undefined {
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent((hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, ''));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const resolved =
    pathPart === '' ? path.join(root, file) : pathPart.startsWith('/') ? path.join(root, pathPart) : path.resolve(root, path.dirname(file), pathPart);
  const relative = path.relative(root, resolved);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return 'points outside the repository';
  if (!existsSync(resolved)) return `${relative} does not exist`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md')) return /^L\d+(-L\d+)?$/.test(anchor) ? undefined : `#${anchor} is not a line anchor and ${relative} is not Markdown`;
  return headingAnchors(readFileSync(resolved, 'utf8')).includes(anchor) ? undefined : `#${anchor} is not a heading of ${relative}`;
}
