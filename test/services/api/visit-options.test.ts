import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { captureVariants, type CaptureClient } from '../../support/capture-variants.ts';
import { decodeDataUri, startRenderer, testConfig } from '../../support/harness.ts';
import { useGuardBed } from '../../support/guard-bed.ts';

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
        return send(200, html('', '<script>document.documentElement.className="ok";document.body.className="ok"</script>'));
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

  for (const variant of captureVariants(ENV)) {
    describe(variant.name, () => {
      let api: CaptureClient;
      before(async () => {
        api = await variant.start(renderer);
      });
      after(() => api.close());
      const ok = (response: request.Response) => expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);

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

      it('html renders a document of its own; its answer says url about:blank', async () => {
        const response = await api.post({ html: '<body style="margin:0;background:rgb(0,160,0)"><h1>hi</h1></body>', removeAds: false });
        ok(response);
        expect(response.body.url).to.equal('about:blank');
        expect(near(colourAt(response.body, 640, 360), GREEN)).to.equal(true);
      });
    });
  }

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
