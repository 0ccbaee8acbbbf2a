import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import { createRemoteRenderer } from '../../../../services/api/src/remote-renderer.ts';
import type { Renderer } from '../../../../services/renderer/src/renderer.ts';
import { page } from '../../../support/fixture-server.ts';
import { decodeDataUri, sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';
import { sampleValue, startRendererService, type RendererService } from '../../../support/renderer-service.ts';
import { startHosted, type HostedHarness } from './support.ts';

/**
 * Issue 14 part 5: a restricted key's domains hold for every page the main frame loads. One loopback
 * server plays three sites (Chromium sends every *.localhost name to loopback through the guard's
 * proxy) and counts what each was asked for, so a test can show that the foreign site never got the
 * request for its page, not merely that the picture is not of it.
 */
const ALLOWED = 'allowed.localhost';
const SUBDOMAIN = 'www.allowed.localhost';
const FOREIGN = 'foreign.localhost';

const GREEN: [number, number, number] = [0, 255, 0];

interface Sites {
  url(host: string, path: string): string;
  /** Requests `host` got for `path` so far. */
  hits(host: string, path: string): number;
  reset(): void;
  close(): Promise<void>;
}

async function startSites(): Promise<Sites> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', `http://${host}`);
    seen.push(`${host} ${url.pathname}`);
    const to = url.searchParams.get('to') ?? '/page';
    const html = (body: string, options: { head?: string; style?: string } = {}) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page(body, options));
    };
    // Pages are green on the allowed sites and red on the foreign one: a picture of it would show.
    const colour = host === FOREIGN ? '#ff0000' : '#00ff00';
    const full = `html,body{background:${colour};height:100%}`;
    switch (url.pathname) {
      case '/page':
        return html('<h1>page</h1>', { style: full });
      case '/redirect':
        res.writeHead(302, { location: to, 'cache-control': 'no-store' });
        return res.end();
      case '/script-away':
        return html('<h1>leaving</h1>', { style: full, head: `<script>addEventListener('load', () => setTimeout(() => { location.href = ${JSON.stringify(to)} }, 100))</script>` });
      case '/meta-refresh':
        return html('<h1>refreshing</h1>', { style: full, head: `<meta http-equiv="refresh" content="0;url=${to}">` });
      case '/form-away':
        return html(`<form method="post" action="${to}"><input name="q" value="1"></form>`, {
          style: full,
          head: `<script>addEventListener('load', () => document.forms[0].submit())</script>`,
        });
      case '/frame-sends-top':
        // A same-origin iframe may navigate the top frame without a user gesture.
        return html(`<iframe src="/top-away?to=${encodeURIComponent(to)}"></iframe>`, { style: full });
      case '/top-away':
        return html('', { head: `<script>top.location.href = ${JSON.stringify(to)}</script>` });
      case '/blob-page':
        // Navigates itself to a page it wrote: a blob: URL of its own origin.
        return html('<h1>writing</h1>', {
          style: 'html,body{background:#0000ff;height:100%}',
          head: `<script>addEventListener('load', () => { location.href = URL.createObjectURL(new Blob(['<style>html,body{background:#00ff00;height:100%}</style><h1>blob</h1>'], { type: 'text/html' })) })</script>`,
        });
      case '/popup':
        return html('<h1>opener</h1>', { style: full, head: `<script>addEventListener('load', () => window.open(${JSON.stringify(to)}))</script>` });
      case '/framed':
        // A page in an iframe that has an iframe of its own.
        return html('<iframe src="/page" style="border:0;width:100%;height:100%"></iframe>', { style: full });
      case '/mixed':
        // An allowed page that uses another host for its stylesheet, script, image and (nested) iframes.
        return html(
          `<img src="${to}/pixel.svg" width="20" height="20"><iframe src="${to}/framed" style="position:fixed;right:0;bottom:0;width:40px;height:40px;border:0"></iframe>`,
          { style: full, head: `<link rel="stylesheet" href="${to}/style.css"><script src="${to}/script.js"></script>` },
        );
      case '/pixel.svg':
        res.writeHead(200, { 'content-type': 'image/svg+xml' });
        return res.end('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><rect width="20" height="20" fill="#00f"/></svg>');
      case '/style.css':
        res.writeHead(200, { 'content-type': 'text/css' });
        return res.end('h1 { font-weight: bold }');
      case '/script.js':
        res.writeHead(200, { 'content-type': 'text/javascript' });
        return res.end('window.fromCdn = true;');
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not found');
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (host, path) => `http://${host}:${port}${path}`,
    hits: (host, path) => seen.filter((entry) => entry === `${host} ${path}`).length,
    reset: () => void seen.splice(0),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const refusal = `Domain not allowed: ${FOREIGN} is not among the allowed domains (the page navigated there)`;

const renderers: [string, () => Promise<{ renderer: Renderer; close(): Promise<void> }>][] = [
  ['in-process renderer', async () => ({ renderer: await sharedRenderer(), close: async () => undefined })],
  [
    'renderer service over HTTP',
    async () => {
      const service: RendererService = await startRendererService(await sharedRenderer());
      const remote = await createRemoteRenderer(testConfig({ RENDERER_URL: service.url }).remoteRenderer!, silentLogger);
      return {
        renderer: remote,
        close: async () => {
          await remote.close();
          await service.close();
        },
      };
    },
  ],
];

for (const [name, startRenderer] of renderers) {
  describe(`restricted keys cannot be redirected (hosted, real Chromium, ${name})`, () => {
    let sites: Sites;
    let backend: { renderer: Renderer; close(): Promise<void> };
    let hosted: HostedHarness;
    let restrictedKey: string;
    let openKey: string;

    before(async () => {
      sites = await startSites();
      backend = await startRenderer();
      hosted = await startHosted({ renderer: backend.renderer });
      const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'scoped', allowedDomains: [ALLOWED] });
      restrictedKey = (await hosted.store.createKey({ accountId: hosted.account.id, name: 'restricted', kind: 'site', siteId: site.id, restrictDomains: true })).secret;
      openKey = (await hosted.store.createKey({ accountId: hosted.account.id, name: 'open', kind: 'site', siteId: site.id })).secret;
    });
    after(async () => {
      await hosted.close();
      await backend.close();
      await sites.close();
    });
    beforeEach(() => sites.reset());

    const capture = (key: string, url: string) => hosted.api(key).post('/api/screenshot', { url, removeAds: false });

    /** Captures `url` with the restricted key and expects the refusal, with no request for the foreign page. */
    async function expectRefused(url: string, foreignPath = '/page') {
      const response = await capture(restrictedKey, url);
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(403);
      expect(response.body).to.deep.equal({ success: false, error: refusal });
      expect(sites.hits(FOREIGN, foreignPath), `${FOREIGN} was asked for ${foreignPath}`).to.equal(0);
    }

    it('answers 403 for an open redirect (302) to a foreign host, which never gets the request, and counts it', async () => {
      const refusals = async () => (await sampleValue(apiRegistry, 'viewfinder_auth_failures_total', { reason: 'domain_forbidden' })) ?? 0;
      const before = await refusals();
      await expectRefused(sites.url(ALLOWED, `/redirect?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`));
      expect(sites.hits(ALLOWED, '/redirect')).to.equal(1);
      expect(await refusals()).to.equal(before + 1);
    });

    it('answers 403 for a chain allowed → allowed subdomain → foreign, at the last hop', async () => {
      const last = sites.url(SUBDOMAIN, `/redirect?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`);
      await expectRefused(sites.url(ALLOWED, `/redirect?to=${encodeURIComponent(last)}`));
      expect(sites.hits(ALLOWED, '/redirect')).to.equal(1);
      expect(sites.hits(SUBDOMAIN, '/redirect')).to.equal(1);
    });

    it('follows a chain that stays within the domains', async () => {
      const last = sites.url(SUBDOMAIN, `/redirect?to=${encodeURIComponent(sites.url(ALLOWED, '/page'))}`);
      const response = await capture(restrictedKey, sites.url(ALLOWED, `/redirect?to=${encodeURIComponent(last)}`));
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal(GREEN);
    });

    it('answers 403 when the page sets location after load', async () => {
      await expectRefused(sites.url(ALLOWED, `/script-away?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`));
      expect(sites.hits(ALLOWED, '/script-away')).to.equal(1);
    });

    it('answers 403 for a meta refresh to a foreign host', async () => {
      await expectRefused(sites.url(ALLOWED, `/meta-refresh?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`));
    });

    it('answers 403 for a form the page submits to a foreign host', async () => {
      await expectRefused(sites.url(ALLOWED, `/form-away?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`));
    });

    it('answers 403 when an iframe navigates the top frame to a foreign host', async () => {
      await expectRefused(sites.url(ALLOWED, `/frame-sends-top?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`));
      expect(sites.hits(ALLOWED, '/top-away')).to.equal(1);
    });

    it('captures an allowed page whose stylesheet, script, image and nested iframes come from a foreign host', async () => {
      const response = await capture(restrictedKey, sites.url(ALLOWED, `/mixed?to=${encodeURIComponent(sites.url(FOREIGN, ''))}`));
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
      const image = decodeDataUri(response.body.image);
      expect(image.rgb(640, 360)).to.deep.equal(GREEN);
      expect(image.rgb(1260, 700), 'the foreign iframe (red) is shown').to.deep.equal([255, 0, 0]);
      for (const path of ['/style.css', '/script.js', '/pixel.svg', '/framed', '/page']) expect(sites.hits(FOREIGN, path), path).to.equal(1);
    });

    it('captures a page that navigates to a blob: URL it made, which belongs to its own origin', async () => {
      const response = await capture(restrictedKey, sites.url(ALLOWED, '/blob-page'));
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal(GREEN);
    });

    it('captures a page whose pop-up would open a foreign host: Chromium blocks it, and it is never the capture', async () => {
      const response = await capture(restrictedKey, sites.url(ALLOWED, `/popup?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`));
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal(GREEN);
      expect(sites.hits(FOREIGN, '/page')).to.equal(0);
    });

    it('lets a key without domain restrictions follow the same redirect', async () => {
      const response = await capture(openKey, sites.url(ALLOWED, `/redirect?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`));
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal([255, 0, 0]);
      expect(sites.hits(FOREIGN, '/page')).to.equal(1);
    });

    it('holds with removeAds on, whose own interception shares the page', async () => {
      const url = sites.url(ALLOWED, `/script-away?to=${encodeURIComponent(sites.url(FOREIGN, '/page'))}`);
      const response = await hosted.api(restrictedKey).post('/api/screenshot', { url, removeAds: true });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(403);
      expect(response.body).to.deep.equal({ success: false, error: refusal });
      expect(sites.hits(FOREIGN, '/page')).to.equal(0);
    });
  });
}
