import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import type { Checks } from '../../services/api/src/monitors/checks.ts';
import type { FixtureServer } from './fixture-server.ts';

/**
 * Pages that each break one way (issue #40), and the healthy page they break from: a page report
 * judged by HEALTH_CHECKS fails exactly the check named beside each page, and the healthy page none.
 */
export const HEALTH_CHECKS: Checks = {
  status: [200],
  maxConsoleErrors: 0,
  maxFailedRequests: 0,
  webVitals: { LCP: 'good', CLS: 0.1 },
  maxViolations: { serious: 0 },
  text: [{ selector: '#buy', contains: 'Add to cart' }],
};

/** Served this much later than the page: the LCP element cannot paint before, so LCP is over the 'good' band (2500 ms). */
export const SLOW_IMAGE_DELAY_MS = 2700;

interface Parts {
  head?: string;
  body?: string;
  script?: string;
}

function document({ head = '', body = '', script = '' }: Parts): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<link rel="stylesheet" href="/style.css">${head}</head>
<body><main><h1>Shop</h1><p>Plain goods at plain prices.</p>${body}</main>${script ? `<script>${script}</script>` : ''}</body></html>`;
}

const BUY = '<button id="buy">Add to cart</button>';
const LABELLED = '<label>Quantity <input id="quantity" type="number" value="1"></label>';
// Bodies are read: Chromium keeps a fetch whose body nobody reads open, and the smart wait waits for it.
const FETCH_OK = "fetch('/api/ok').then((r) => r.text())";
const HEALTHY = { body: `${LABELLED}${BUY}`, script: FETCH_OK };

const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/**
 * An image as large as it is shown (Chromium counts an upscaled image at its own size for LCP), and
 * noisy: an image of fewer than 0.05 bits per pixel is no LCP candidate at all.
 */
function heroImage(): Buffer {
  const png = new PNG({ width: 400, height: 300 });
  randomBytes(png.data.length).copy(png.data);
  for (let alpha = 3; alpha < png.data.length; alpha += 4) png.data[alpha] = 255;
  return PNG.sync.write(png);
}
const HERO = heroImage();

/** path → [the check it fails (none for healthy and csp-report-only), the page] */
export const BROKEN_PAGES: Record<string, { fails: string[]; parts: Parts; headers?: Record<string, string> }> = {
  '/healthy': { fails: [], parts: HEALTHY },
  '/console-error': { fails: ['maxConsoleErrors'], parts: { ...HEALTHY, script: `${FETCH_OK}; console.error('checkout failed to start')` } },
  // The image is reported, not refused: a CSP report-only violation must not count as an error.
  '/csp-report-only': {
    fails: [],
    parts: { ...HEALTHY, body: `${HEALTHY.body}<img src="/pixel.png" alt="">` },
    headers: { 'content-security-policy-report-only': "img-src 'none'" },
  },
  '/missing-stylesheet': { fails: ['maxFailedRequests'], parts: { ...HEALTHY, head: '<link rel="stylesheet" href="/missing.css">' } },
  '/failing-fetch': { fails: ['maxFailedRequests'], parts: { ...HEALTHY, script: "fetch('/api/broken').then((r) => r.text())" } },
  '/slow-lcp': { fails: ['webVitals.LCP'], parts: { ...HEALTHY, body: `<img src="/slow-hero.png" alt="Hero" width="400" height="300">${HEALTHY.body}` } },
  '/layout-shift': {
    fails: ['webVitals.CLS'],
    parts: {
      ...HEALTHY,
      body: `<div id="slot"></div><div style="height:400px;background:#ddd">Deals</div>${HEALTHY.body}`,
      script: `${FETCH_OK}; addEventListener('load', () => setTimeout(() => { document.getElementById('slot').style.height = '300px'; }, 100))`,
    },
  },
  '/unlabeled-input': { fails: ['maxViolations.serious'], parts: { ...HEALTHY, body: `<input id="quantity" type="number" value="1">${BUY}` } },
  '/missing-text': { fails: ['text[0].contains'], parts: { ...HEALTHY, body: `${LABELLED}<button id="buy">Sold out</button>` } },
};

export async function startHealthPages(): Promise<FixtureServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
      res.end(body);
    };
    const page = BROKEN_PAGES[url.pathname];
    if (page) return send(200, 'text/html; charset=utf-8', document(page.parts), page.headers);
    switch (url.pathname) {
      case '/style.css':
        return send(200, 'text/css', 'body{font-family:sans-serif;color:#111;background:#fff}');
      case '/redirect-to-healthy':
        return send(302, 'text/plain', '', { location: '/healthy' });
      case '/api/ok':
        return send(200, 'application/json', '{"ok":true}');
      case '/api/broken':
        return send(500, 'application/json', '{"error":"down"}');
      case '/pixel.png':
        return send(200, 'image/png', PIXEL);
      case '/slow-hero.png':
        return void setTimeout(() => send(200, 'image/png', HERO), SLOW_IMAGE_DELAY_MS);
      // Logs `count` errors, and one message far longer than the report keeps.
      case '/noisy':
        return send(
          200,
          'text/html; charset=utf-8',
          document({ script: `console.error('x'.repeat(5000)); for (let i = 1; i < ${Number(url.searchParams.get('count'))}; i++) console.error('error ' + i);` }),
        );
      // Echoes what a page could learn of its visitor's credentials into the console, its text and a request.
      case '/echo-credentials':
        return send(
          200,
          'text/html; charset=utf-8',
          document({
            body: `<p id="seen">${String(req.headers['x-secret'] ?? '')} ${String(req.headers.cookie ?? '')}</p>`,
            script: `console.error('cookie: ' + document.cookie + ' at ' + location.href); fetch('/api/broken?c=' + encodeURIComponent(document.cookie)).then((r) => r.text());`,
          }),
        );
      default:
        return send(404, 'text/plain', 'not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
