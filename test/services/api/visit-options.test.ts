import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { describeEachVariant, expectOk } from '../../support/capture-variants.ts';
import { decodeDataUri, startRenderer, testConfig } from '../../support/harness.ts';
import { useGuardBed } from '../../support/guard-bed.ts';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../../services/api/src/app.ts';
import { openDiskCache } from '../../../services/api/src/result-cache/disk-cache.ts';
import type { ResultCache } from '../../../services/api/src/result-cache/result-cache.ts';
import { CREDENTIALS_IN_LINK } from '../../../services/api/src/routes/api/render.get.ts';
import { signRenderLink } from '../../../lib/render-links.ts';
import { capturedLogger } from '../../support/captured-logger.ts';
import { closedPort } from '../../support/fixture-server.ts';
import { startHosted, type HostedHarness } from './hosted/support.ts';
import { openSqliteStore } from '../../../lib/store/sqlite.ts';
import type { Store } from '../../../lib/store/store.ts';
import { createCaptureJobs, type CaptureJobs } from '../../../services/api/src/captures/service.ts';
import { createNetworkGuard } from '../../../services/renderer/src/guard/network-guard.ts';
import { eventually } from '../../support/eventually.ts';
import { silentLogger } from '../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';
import { startRendererService, type RendererService } from '../../support/renderer-service.ts';
import { createRemoteRenderer } from '../../../services/api/src/remote-renderer.ts';

/**
 * The visit options (docs/capture-options.md) in real Chromium, through both capture routes,
 * against pages this test serves: what the page's server received is the proof, and the picture
 * where the option changes what is seen.
 */

type Rgb = [number, number, number];
const near = (a: Rgb, b: Rgb) => a.every((v, i) => Math.abs(v - b[i]!) <= 8);
const GREEN: Rgb = [0, 160, 0];
const RED: Rgb = [200, 0, 0];

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
}

/** A server that records every request it gets, and serves the pages below. */
async function startRecordingServer(host: string, thirdParty?: () => string) {
  const hits: Hit[] = [];
  const reports: Record<string, string>[] = [];
  const html = (body: string, head = '') =>
    `<!doctype html><html><head><meta charset="utf-8">${head}<style>html,body{margin:0;height:100%}body{background:rgb(200,0,0)}.ok{background:rgb(0,160,0)}</style></head><body>${body}</body></html>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${host}`);
    hits.push({ path: url.pathname, headers: req.headers });
    const send = (status: number, body: string, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'text/html', ...headers }).end(body);
    switch (url.pathname) {
      // Shows what it was sent, and loads a picture from a third party, which must see none of it.
      case '/whoami':
        return send(
          200,
          html(
            `<pre id="seen">${JSON.stringify({ test: req.headers['x-test'], cookie: req.headers.cookie, lang: req.headers['accept-language'] })}</pre>` +
              (thirdParty ? `<img src="${thirdParty()}/pixel.png">` : ''),
          ),
        );
      case '/private': {
        const expected = `Basic ${Buffer.from('ada:lovelace').toString('base64')}`;
        if (req.headers.authorization !== expected) return send(401, html('denied'), { 'www-authenticate': 'Basic realm="test"' });
        return send(200, html('<script>document.body.className = "ok"</script>'));
      }
      // Red until the button is clicked.
      case '/click':
        return send(200, html('<button id="show" style="width:200px;height:50px" onclick="document.body.className=\'ok\'">show</button>'));
      case '/blocked':
        return send(
          200,
          html('<img src="/picture.png" width="10" height="10"><span style="font-family:Remote">text</span><script src="/tracker.js?id=1"></script><script src="/app.js"></script>', '<style>@font-face{font-family:Remote;src:url(/font.woff2)}</style>'),
        );
      case '/app.js':
      case '/tracker.js':
        return res.writeHead(200, { 'content-type': 'text/javascript' }).end('');
      // Reports its time zone, languages and position to /report, then shows #done.
      case '/where':
        return send(
          200,
          html(
            '',
            `<script>navigator.geolocation.getCurrentPosition(
              (p) => report({ lat: p.coords.latitude, lon: p.coords.longitude, acc: p.coords.accuracy }),
              (e) => report({ geoError: String(e.code) }));
            function report(extra) {
              const q = new URLSearchParams({ tz: Intl.DateTimeFormat().resolvedOptions().timeZone, lang: navigator.language, intl: Intl.NumberFormat().resolvedOptions().locale, ua: navigator.userAgent, ...extra });
              fetch('/report?' + q).then(() => { const d = document.createElement('div'); d.id = 'done'; d.textContent = 'done'; document.body.append(d); });
            }</script>`,
          ),
        );
      case '/report':
        reports.push(Object.fromEntries(url.searchParams));
        return res.writeHead(204).end();
      case '/pixel.png':
      case '/picture.png':
      case '/font.woff2':
        return res.writeHead(404).end();
      case '/away':
        return res.writeHead(302, { location: `${thirdParty?.()}/landing` }).end();
      case '/landing':
        return send(200, html('landed'));
      default:
        return send(404, 'not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    hits,
    reports,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const ENV = { NAVIGATION_TIMEOUT_MS: '6000', CAPTURE_TIMEOUT_MS: '12000' };
const CREDENTIALS = {
  headers: { 'X-Test': 'header-secret' },
  cookies: [{ name: 'session', value: 'cookie-secret' }],
};

/** The colour at (x, y) of a capture's PNG. */
function colourAt(body: { image: string }, x: number, y: number): Rgb {
  const { png } = decodeDataUri(body.image);
  const i = (png.width * y + x) * 4;
  return [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
}

describe('visit options: html, credentials, injected code, blocking, locale and position (real Chromium, both variants)', () => {
  let renderer: Renderer;
  let target: Awaited<ReturnType<typeof startRecordingServer>>;
  let third: Awaited<ReturnType<typeof startRecordingServer>>;

  before(async () => {
    third = await startRecordingServer('127.0.0.2');
    target = await startRecordingServer('127.0.0.1', () => third.origin);
    renderer = await startRenderer(testConfig(ENV));
  });
  after(async () => {
    await target.close();
    await third.close();
  });
  beforeEach(() => {
    target.hits.length = 0;
    third.hits.length = 0;
    target.reports.length = 0;
  });

  describeEachVariant(ENV, () => renderer, (api) => {
    const ok = expectOk;

    it('headers, cookies and locale reach the page\'s own origin, and none of the credentials the third party it loads', async () => {
      ok(await api.post({ url: `${target.origin}/whoami`, ...CREDENTIALS, locale: 'fr-FR' }));
      const page = target.hits.find((hit) => hit.path === '/whoami')!;
      expect(page.headers).to.include({ 'x-test': 'header-secret', cookie: 'session=cookie-secret', 'accept-language': 'fr-FR' });
      const pixel = third.hits.find((hit) => hit.path === '/pixel.png');
      expect(pixel, 'the third-party picture was requested').to.not.equal(undefined);
      expect(pixel!.headers).to.not.have.any.keys('x-test', 'cookie', 'authorization');
    });

    it('a redirect to another origin carries none of the credentials', async () => {
      ok(await api.post({ url: `${target.origin}/away`, ...CREDENTIALS, authorization: { type: 'bearer', token: 'bearer-secret' } }));
      expect(target.hits.find((hit) => hit.path === '/away')!.headers).to.include({ 'x-test': 'header-secret', authorization: 'Bearer bearer-secret' });
      const landing = third.hits.find((hit) => hit.path === '/landing');
      expect(landing, 'the redirect was followed').to.not.equal(undefined);
      expect(landing!.headers).to.not.have.any.keys('x-test', 'cookie', 'authorization');
    });

    it('basic authorization opens a page behind basic auth, which Chromium refuses without it', async () => {
      const without = await api.post({ url: `${target.origin}/private`, removeAds: false });
      expect(without.status).to.equal(500);
      expect(without.body.error).to.equal('Screenshot generation failed: net::ERR_INVALID_AUTH_CREDENTIALS');
      const withAuth = await api.post({ url: `${target.origin}/private`, removeAds: false, authorization: { type: 'basic', username: 'ada', password: 'lovelace' } });
      ok(withAuth);
      expect(near(colourAt(withAuth.body, 640, 360), GREEN), colourAt(withAuth.body, 640, 360).join(',')).to.equal(true);
    });

    it('click shows what appears only after a click', async () => {
      const clicked = await api.post({ url: `${target.origin}/click`, removeAds: false, click: '#show' });
      ok(clicked);
      expect(near(colourAt(clicked.body, 640, 360), GREEN), colourAt(clicked.body, 640, 360).join(',')).to.equal(true);
      const unclicked = await api.post({ url: `${target.origin}/click`, removeAds: false });
      expect(near(colourAt(unclicked.body, 640, 360), RED)).to.equal(true);
    });

    it('injectCss and injectJs change the page before the picture', async () => {
      const css = await api.post({ url: `${target.origin}/click`, removeAds: false, injectCss: 'body { background: rgb(0, 160, 0) !important }' });
      ok(css);
      expect(near(colourAt(css.body, 640, 360), GREEN)).to.equal(true);
      const js = await api.post({ url: `${target.origin}/click`, removeAds: false, injectJs: 'await new Promise((r) => setTimeout(r, 50)); document.body.className = "ok";' });
      ok(js);
      expect(near(colourAt(js.body, 640, 360), GREEN)).to.equal(true);
    });

    it('blockResources keeps images and fonts from loading, blockUrls the scripts it names, and the rest loads', async () => {
      ok(await api.post({ url: `${target.origin}/blocked`, blockResources: ['images', 'fonts'], blockUrls: [`${target.origin}/tracker.js*`] }));
      const paths = target.hits.map((hit) => hit.path);
      expect(paths).to.include.members(['/blocked', '/app.js']);
      expect(paths).to.not.include.members(['/picture.png']);
      expect(paths).to.not.include('/font.woff2');
      expect(paths).to.not.include('/tracker.js');
    });

    it('timezone, locale, userAgent and geolocation are what the page reads', async () => {
      ok(
        await api.post({
          url: `${target.origin}/where`,
          waitForSelector: '#done',
          timezone: 'Asia/Tokyo',
          locale: 'de-CH',
          userAgent: 'ViewfinderTest/1.0',
          geolocation: { latitude: 48.8584, longitude: 2.2945, accuracy: 25 },
        }),
      );
      expect(target.reports).to.have.length(1);
      expect(target.reports[0]).to.deep.include({ tz: 'Asia/Tokyo', lang: 'de-CH', intl: 'de-CH', ua: 'ViewfinderTest/1.0', lat: '48.8584', lon: '2.2945', acc: '25' });
    });

    it('an injected script that never ends is ended by the capture deadline: 408', async () => {
      const response = await api.post({ url: `${target.origin}/click`, injectJs: 'while (true) {}' });
      expect(response.status).to.equal(408);
      expect(response.body).to.deep.include({ success: false });
    });

    it('each option\'s bad inputs answer 400 in the usual shape, naming the field and never the value', async () => {
      const url = `${target.origin}/whoami`;
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'URL is required'],
        [{ quality: 'high' }, 'URL is required'],
        [{ url, html: '<p>' }, 'url and html cannot be combined: give one'],
        [{ html: '<p>', headers: { 'X-A': 'b' } }, "headers, cookies and authorization go only to the page's own origin, and an html document has none: capture its URL instead"],
        [{ html: '<p>', geolocation: { latitude: 1, longitude: 2 } }, 'geolocation does not apply to html: an html document is not a secure context, and browsers give positions only to those'],
        [{ html: '' }, 'html must be a non-empty HTML document of at most 1000000 bytes'],
        [{ url, userAgent: 'a\nb' }, 'userAgent must be 1 to 512 characters without line breaks'],
        [{ url, headers: { 'X A': 'secret-value' } }, 'headers must be an object of at most 50 header names (HTTP tokens) to strings of at most 4096 characters without line breaks'],
        [{ url, headers: { 'X-A': 'secret\r\nvalue' } }, 'headers must be an object of at most 50 header names (HTTP tokens) to strings of at most 4096 characters without line breaks'],
        [{ url, headers: { Cookie: 'secret-value' } }, 'headers cannot set "Cookie": use cookies'],
        [{ url, headers: { Host: 'evil' } }, 'headers cannot set "Host": the browser sets it'],
        [{ url, cookies: [{ name: 'a', value: 'secret; value' }] }, 'cookies must be a list of at most 50 {"name", "value"} objects: names are HTTP tokens, values at most 4096 cookie characters (no spaces, quotes, commas, semicolons or backslashes)'],
        [{ url, authorization: { type: 'basic', username: 'a:b', password: 'secret-value' } }, 'authorization must be {"type": "basic", "username": ..., "password": ...} (no colon in the username) or {"type": "bearer", "token": ...} (a token68)'],
        [{ url, authorization: { type: 'digest' } }, 'authorization must be {"type": "basic", "username": ..., "password": ...} (no colon in the username) or {"type": "bearer", "token": ...} (a token68)'],
        [{ url, injectCss: '' }, 'injectCss must be a non-empty string of at most 100000 characters'],
        [{ url, injectJs: 5 }, 'injectJs must be a non-empty string of at most 100000 characters'],
        [{ url, click: '' }, 'click must be a non-empty CSS selector of at most 1024 characters'],
        [{ url, click: '#1st' }, 'click is not a valid CSS selector: "#1st"'],
        [{ url, blockResources: ['images', 'images'] }, 'blockResources must be a list of distinct kinds among images, fonts, media, scripts'],
        [{ url, blockResources: ['stylesheets'] }, 'blockResources must be a list of distinct kinds among images, fonts, media, scripts'],
        [{ url, blockUrls: ['has space'] }, 'blockUrls must be a list of at most 50 URL patterns of 1 to 1024 characters without spaces'],
        [{ url, timezone: 'Mars/Olympus' }, 'timezone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Paris)'],
        [{ url, timezone: 'a b' }, 'timezone must be an IANA time zone, e.g. Europe/Paris'],
        [{ url, locale: 'french!' }, 'locale must be a BCP 47 language tag, e.g. fr-FR'],
        [{ url, geolocation: { latitude: 91, longitude: 0 } }, 'geolocation must be {"latitude": -90 to 90, "longitude": -180 to 180} with an optional "accuracy" in metres (0 to 100000)'],
        [{ url, geolocation: { latitude: 0 } }, 'geolocation must be {"latitude": -90 to 90, "longitude": -180 to 180} with an optional "accuracy" in metres (0 to 100000)'],
      ];
      for (const [body, error] of cases) {
        const response = await api.post(body);
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.body, JSON.stringify(body)).to.deep.equal({ success: false, error });
        expect(JSON.stringify(response.body)).to.not.include('secret');
      }
    });

    it('html renders a document of its own; its answer says url about:blank', async () => {
      const response = await api.post({ html: '<body style="margin:0;background:rgb(0,160,0)"><h1>hi</h1></body>', removeAds: false });
      ok(response);
      expect(response.body.url).to.equal('about:blank');
      expect(near(colourAt(response.body, 640, 360), GREEN)).to.equal(true);
    });
  });

  describe('credentials stay out of logs, error messages and the result cache (self-hosted, disk cache)', () => {
    let dataDir: string;
    let cache: ResultCache;
    let logs: ReturnType<typeof capturedLogger>;
    let app: ReturnType<typeof createApp>;
    before(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-visit-'));
      cache = await openDiskCache({ dir: path.join(dataDir, 'result-cache'), maxBytes: 50 * 1024 * 1024 });
      logs = capturedLogger();
      app = createApp({ config: testConfig(ENV), renderer, logger: logs.logger, resultCache: cache });
    });
    after(() => rmSync(dataDir, { recursive: true, force: true }));
    const post = (body: object) => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);
    const secrets = { ...CREDENTIALS, authorization: { type: 'basic', username: 'ada', password: 'lovelace-secret' } };

    it('a second capture with the same credentials is a hit, and no file of the cache and no log line holds them', async () => {
      const first = await post({ url: `${target.origin}/whoami`, ...secrets, cacheTtl: 60 });
      expect(first.status).to.equal(200);
      expect(first.body.cached).to.equal(false);
      const second = await post({ url: `${target.origin}/whoami`, ...secrets, cacheTtl: 60 });
      expect(second.body.cached).to.equal(true);
      const other = await post({ url: `${target.origin}/whoami`, ...secrets, headers: { 'X-Test': 'another' }, cacheTtl: 60 });
      expect(other.body.cached, 'other credentials are another entry').to.equal(false);
      const stored = readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
      expect(stored.length).to.be.greaterThan(0);
      for (const entry of stored) {
        const bytes = readFileSync(path.join(entry.parentPath, entry.name));
        for (const secret of ['header-secret', 'cookie-secret', 'lovelace-secret', Buffer.from('ada:lovelace-secret').toString('base64')]) {
          expect(bytes.includes(secret), `${entry.name} holds ${secret}`).to.equal(false);
          expect(entry.name).to.not.include(secret);
        }
      }
      expect(logs.lines.length).to.be.greaterThan(0);
      expect(logs.lines.join('\n')).to.not.match(/header-secret|cookie-secret|lovelace-secret/);
    });

    it('a capture that fails says nothing of its credentials', async () => {
      const response = await post({ url: `http://127.0.0.1:${await closedPort()}/`, ...secrets });
      expect(response.status).to.equal(500);
      expect(JSON.stringify(response.body)).to.not.match(/secret/);
      expect(logs.lines.join('\n')).to.not.match(/header-secret|cookie-secret|lovelace-secret/);
    });
  });

  describe('through the renderer service (RENDERER_URL): the options cross the wire', () => {
    let service: RendererService;
    let remote: Renderer;
    before(async () => {
      service = await startRendererService(renderer);
      const config = testConfig({ ...ENV, RENDERER_URL: service.url });
      remote = await createRemoteRenderer(config.remoteRenderer!, silentLogger);
    });
    after(async () => {
      await remote.close();
      await service.close();
    });

    it('a capture with credentials, locale and html over HTTP gets what an in-process one gets', async () => {
      const app = createApp({ config: testConfig({ ...ENV, RENDERER_URL: service.url }), renderer: remote, logger: silentLogger });
      const post = (body: object) => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);
      expectOk(await post({ url: `${target.origin}/whoami`, ...CREDENTIALS, locale: 'fr-FR', blockResources: ['images'] }));
      expect(target.hits.find((hit) => hit.path === '/whoami')!.headers).to.include({ 'x-test': 'header-secret', cookie: 'session=cookie-secret', 'accept-language': 'fr-FR' });
      expect(third.hits.map((hit) => hit.path), 'the picture is blocked').to.not.include('/pixel.png');
      const html = await post({ html: '<body style="margin:0;background:rgb(0,160,0)"></body>', removeAds: false });
      expectOk(html);
      expect(near(colourAt(html.body, 640, 360), GREEN)).to.equal(true);
    });
  });

  describe('asynchronous captures (self-hosted POST /captures): the options go through; the status and the webhook carry no credential', () => {
    let dataDir: string;
    let store: Store;
    let captures: CaptureJobs;
    let receiver: WebhookReceiver;
    let api: ReturnType<typeof request>;
    const SIGNING = 'c'.repeat(32);
    before(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-visit-async-'));
      store = openSqliteStore({ dataDir });
      receiver = await startWebhookReceiver();
      const config = testConfig({ ...ENV, DATA_DIR: dataDir, JOB_POLL_INTERVAL_MS: '50', WEBHOOK_SIGNING_SECRET: SIGNING });
      captures = createCaptureJobs({ store, renderer, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist) });
      captures.runner.start();
      api = request(createApp({ config, renderer, logger: silentLogger, captures }).callback());
    });
    after(async () => {
      await captures.runner.stop(1000);
      await store.close();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('renders with the credentials and locale, and neither the status nor the webhook holds a credential', async () => {
      const submitted = await api
        .post('/captures')
        .set('Content-Type', 'application/json')
        .send({ url: `${target.origin}/whoami`, ...CREDENTIALS, authorization: { type: 'bearer', token: 'bearer-secret' }, locale: 'fr-FR', webhookUrl: receiver.url });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
      await eventually('the webhook arrives', () => receiver.deliveries.length === 1, 30_000);
      const status = await api.get(`/captures/${submitted.body.id}`);
      expect(status.body).to.deep.include({ status: 'succeeded' });
      expect(target.hits.find((hit) => hit.path === '/whoami')!.headers).to.include({ 'x-test': 'header-secret', authorization: 'Bearer bearer-secret', 'accept-language': 'fr-FR' });
      for (const text of [JSON.stringify(status.body), receiver.deliveries[0]!.body]) expect(text).to.not.match(/header-secret|cookie-secret|bearer-secret/);
    });

    it('checks the options as the synchronous route does: a forbidden header is a 400', async () => {
      const response = await api.post('/captures').set('Content-Type', 'application/json').send({ url: `${target.origin}/whoami`, headers: { Authorization: 'x' } });
      expect(response.status).to.equal(400);
      expect(response.body).to.deep.equal({ success: false, error: 'headers cannot set "Authorization": use authorization' });
    });
  });

  describe('hosted rules: html and a restricted key, credentials and render links', () => {
    let hosted: HostedHarness;
    before(async () => {
      hosted = await startHosted({ renderer, env: ENV });
    });
    after(() => hosted.close());

    it('a domain-restricted key cannot capture html nor run injectJs (403), may inject CSS; an unrestricted site key may capture html', async () => {
      const site = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains: ['127.0.0.1'] });
      const restricted = await hosted.api(hosted.fullKey).post('/api/keys', { name: 'r', siteId: site.body.id, restrictDomains: true });
      const refused = await hosted.api(restricted.body.key).post('/api/screenshot', { html: '<p>hi</p>' });
      expect(refused.status).to.equal(403);
      expect(refused.body).to.deep.equal({
        success: false,
        error: 'html cannot be captured with a domain-restricted key: the document belongs to no domain; use an unrestricted key',
      });
      const script = await hosted.api(restricted.body.key).post('/api/screenshot', { url: `${target.origin}/click`, injectJs: 'document.body.innerHTML = "<iframe src=https://example.com>"' });
      expect(script.status).to.equal(403);
      expect(script.body.error).to.equal('injectJs cannot be used with a domain-restricted key: a script can make the page show any site; use an unrestricted key');
      const css = await hosted.api(restricted.body.key).post('/api/screenshot', { url: `${target.origin}/click`, injectCss: 'button { display: none }', removeAds: false });
      expect(css.status, 'injectCss only restyles the allowed page').to.equal(200);
      const open = await hosted.api(hosted.fullKey).post('/api/keys', { name: 'o', siteId: site.body.id, restrictDomains: false });
      const allowed = await hosted.api(open.body.key).post('/api/screenshot', { html: '<p>hi</p>' });
      expect(allowed.status, JSON.stringify(allowed.body)).to.equal(200);
    });

    it('a signed render link with credentials is a 400, and one with the other visit options renders', async () => {
      const site = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains: [] });
      const key = await hosted.api(hosted.fullKey).post('/api/keys', { name: 'links', siteId: site.body.id });
      const link = (options: [string, string][]) => signRenderLink({ origin: 'http://x', options, keyId: key.body.id, signingSecret: key.body.signingSecret }).slice('http://x'.length);
      const url = `${target.origin}/whoami`;
      const refused = await request(hosted.app.callback()).get(link([['url', url], ['authorization.type', 'bearer'], ['authorization.token', 'abc']]));
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.equal({ success: false, error: CREDENTIALS_IN_LINK });
      // headers and cookies by any spelling a link can give them: the documented refusal, never a validation text (issue 44).
      for (const credentials of [[['headers.Accept', 'text/html']], [['headers.X-Api-Key', 'secret']], [['headers', 'Cookie: a=b']], [['cookies', 'session=1']], [['cookies.name', 'session'], ['cookies.value', '1']]] as [string, string][][]) {
        const answer = await request(hosted.app.callback()).get(link([['url', url], ...credentials]));
        expect(answer.status, JSON.stringify(credentials)).to.equal(400);
        expect(answer.body, JSON.stringify(credentials)).to.deep.equal({ success: false, error: CREDENTIALS_IN_LINK });
      }
      const rendered = await request(hosted.app.callback()).get(link([['url', url], ['locale', 'fr-FR'], ['blockResources', 'images']]));
      expect(rendered.status, rendered.text).to.equal(200);
      expect(target.hits.find((hit) => hit.path === '/whoami')!.headers['accept-language']).to.equal('fr-FR');
    });
  });

  describe('html and injectJs pass the network guard as a URL capture does (loopback not allowlisted)', () => {
    const bed = useGuardBed();
    const post = (body: object) => request(bed.app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);

    it('<img>, <iframe>, fetch and <link rel=prefetch> of html never reach a server on 127.0.0.1', async () => {
      const secret = `http://127.0.0.1:${bed.secret.port}`;
      const response = await post({
        html: `<link rel="prefetch" href="${secret}/prefetch"><img src="${secret}/img"><iframe src="${secret}/frame"></iframe><script>fetch("${secret}/fetch").catch(() => {})</script>`,
      });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(bed.secret.hits()).to.equal(0);
    });

    it('a <meta http-equiv=refresh> of html to 127.0.0.1 is refused (403) and never reaches it', async () => {
      const response = await post({ html: `<meta http-equiv="refresh" content="0;url=http://127.0.0.1:${bed.secret.port}/refresh"><p>moving</p>`, wait: 2000 });
      expect(response.status, JSON.stringify(response.body)).to.equal(403);
      expect(bed.secret.hits()).to.equal(0);
    });

    it('a fetch by injectJs to 127.0.0.1 never reaches it', async () => {
      const response = await post({
        url: bed.fixtures.url('/simple'),
        injectJs: `await fetch("http://127.0.0.1:${bed.secret.port}/js").catch(() => {});`,
      });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(bed.secret.hits()).to.equal(0);
    });
  });
});
