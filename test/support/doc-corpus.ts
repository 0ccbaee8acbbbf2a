import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FixtureServer } from './fixture-server.ts';

/**
 * Pages with no consent notice, on which removeAds must change nothing: Python's documentation
 * (Debian's python3-doc), Node.js's (shipped with the nodejs package), Bootstrap's examples
 * (libjs-bootstrap5-doc, styled by libjs-bootstrap5) and an article written to tempt the heuristic
 * pass: a footer about privacy and cookies, a paragraph about cookies, a fixed bar with a "Close"
 * button. `make test-deps` installs the Debian packages.
 */
export const DOC_ROOTS = {
  python: '/usr/share/doc/python3-doc/html',
  node: '/usr/share/doc/nodejs/api',
  bootstrapExamples: '/usr/share/doc/libjs-bootstrap5/examples',
  bootstrapDist: '/usr/share/javascript/bootstrap5',
} as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
};

const ARTICLE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>How browsers remember you</title>
<style>body{margin:0;font:18px/1.6 Georgia,serif;color:#222;background:#fdfcf8}
header{position:sticky;top:0;background:#102a43;color:#fff;padding:12px 24px;z-index:10}
article{max-width:680px;margin:32px auto;padding:0 24px}
.share{position:fixed;left:0;right:0;bottom:0;background:#e8eef4;padding:10px 24px;display:flex;gap:12px;align-items:center}
footer{background:#243b53;color:#d9e2ec;padding:24px}footer a{color:#fff}</style></head><body>
<header><nav><a href="/" style="color:#fff">The Daily Fixture</a> · World · Science · Privacy &amp; Security</nav></header>
<article><h1>How browsers remember you</h1>
<p>Every time you visit a site, your browser may store small files called cookies. They hold a session, a
language, a basket. Some sites ask for your consent before they set any that are not strictly necessary.</p>
<p>Privacy regulators in Europe have written at length about what counts as consent. A banner that offers only
"Accept" is not enough; a refusal must be as easy as an acceptance.</p>
<p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. '.repeat(12)}</p>
<button type="button">OK, show me more</button></article>
<div class="share">Share this article <button type="button">Copy link</button><button type="button">Close</button></div>
<footer>© The Daily Fixture · <a href="/privacy">Privacy policy</a> · <a href="/cookies">Cookie settings</a> · <a href="/terms">Terms</a>
<button type="button">Back to top</button></footer></body></html>`;

/** Bootstrap's examples are Hugo templates: front matter, then the body. This is the page Hugo would make of one. */
function bootstrapExample(name: string): string {
  const source = readFileSync(path.join(DOC_ROOTS.bootstrapExamples, name, 'index.html'), 'utf8');
  const [, frontMatter = '', body = source] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(source) ?? [];
  const bodyClass = /^body_class:\s*"?([^"\n]*)"?/m.exec(frontMatter)?.[1] ?? '';
  const extraCss = Array.from(frontMatter.matchAll(/^\s+-\s+"([^"]+\.css)"/gm), (match) => `<link rel="stylesheet" href="${match[1]}">`).join('');
  const html = body.replace(/\{\{<[^>]*>\}\}/g, '#').replace(/\{\{[^}]*\}\}/g, '');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name}</title><link rel="stylesheet" href="/bootstrap/dist/css/bootstrap.min.css">${extraCss}</head>
<body class="${bodyClass}">${html}<script src="/bootstrap/dist/js/bootstrap.bundle.min.js"></script></body></html>`;
}

/** Serves the corpus on loopback (127.0.0.2 by default, where EasyList's generic rules apply in full). */
export async function startDocCorpusServer(host = '127.0.0.2'): Promise<FixtureServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://corpus');
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    try {
      if (url.pathname === '/article') return send(CONTENT_TYPES['.html'] as string, ARTICLE);
      const example = /^\/bootstrap\/examples\/([\w-]+)\/$/.exec(url.pathname);
      if (example) return send(CONTENT_TYPES['.html'] as string, bootstrapExample(example[1] as string));
      const mounts: [string, string][] = [
        ['/python/', DOC_ROOTS.python],
        ['/node/', DOC_ROOTS.node],
        ['/bootstrap/examples/', DOC_ROOTS.bootstrapExamples],
        ['/bootstrap/dist/', DOC_ROOTS.bootstrapDist],
      ];
      const mount = mounts.find(([prefix]) => url.pathname.startsWith(prefix));
      const relative = mount && path.posix.normalize(decodeURIComponent(url.pathname.slice(mount[0].length)));
      const type = relative && CONTENT_TYPES[path.extname(relative)];
      if (mount && relative && type && !relative.startsWith('..')) return send(type, readFileSync(path.join(mount[1], relative)));
    } catch {
      // Not there: a 404 below, as a missing file on a real site.
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (pagePath: string) => `${origin}${pagePath}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
