import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../../services/api/src/app.ts';
import { createChromiumRenderer } from '../../../services/renderer/src/pool.ts';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { openDiskCache } from '../../../services/api/src/result-cache/disk-cache.ts';
import { openSqliteStore } from '../../../lib/store/sqlite.ts';
import type { Store } from '../../../lib/store/store.ts';
import { createCaptureJobs, type CaptureJobs } from '../../../services/api/src/captures/service.ts';
import { createNetworkGuard } from '../../../services/renderer/src/guard/network-guard.ts';
import { STEPS_IN_LINK } from '../../../services/api/src/routes/api/render.get.ts';
import { signRenderLink } from '../../../lib/render-links.ts';
import { describeEachVariant, expectOk } from '../../support/capture-variants.ts';
import { capturedLogger } from '../../support/captured-logger.ts';
import { decodeDataUri, silentLogger, testConfig } from '../../support/harness.ts';
import { startSecretServer, type SecretServer } from '../../support/secret-server.ts';
import { eventually } from '../../support/eventually.ts';
import { startHosted, type HostedHarness } from './hosted/support.ts';
import { startRendererService, type RendererService } from '../../support/renderer-service.ts';
import { createRemoteRenderer } from '../../../services/api/src/remote-renderer.ts';
import { JOURNEY_HEADER } from '../../../services/api/src/routes/screenshot-answer.ts';

/**
 * Journeys (steps) in real Chromium against a small site this test serves on 127.0.0.2, the only
 * allowlisted address: a sign-in form whose POST sets a session cookie and redirects, pages that need
 * that cookie, a <select>, a hover menu, a checkbox. A "secret" service on 127.0.0.1 counts every
 * connection: a step's navigation there must be refused before any request reaches it.
 */

const PASSWORD = 'pw-Zq8-journey-secret';
const SESSION = 'session-7f3a';

type Rgb = [number, number, number];
const GREEN: Rgb = [0, 160, 0];
const near = (a: Rgb, b: Rgb) => a.every((v, i) => Math.abs(v - b[i]!) <= 8);
function colourAt(image: unknown, x: number, y: number): Rgb {
  const { png } = decodeDataUri(image);
  const i = (png.width * y + x) * 4;
  return [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
}

async function startJourneySite(secretPort: () => number) {
  const logins: { user: string; ok: boolean }[] = [];
  const html = (body: string, style = '') =>
    `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;height:100%;font:16px sans-serif}body{background:rgb(200,0,0)}.ok{background:rgb(0,160,0)}${style}</style></head><body>${body}</body></html>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const signedIn = (req.headers.cookie ?? '').split(/;\s*/).includes(`session=${SESSION}`);
    const send = (body: string) => res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    const redirect = (location: string, headers: Record<string, string> = {}) => res.writeHead(303, { location, ...headers }).end();
    if (url.pathname === '/login' && req.method === 'POST') {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const ok = form.get('user') === 'ada' && form.get('password') === PASSWORD;
        logins.push({ user: form.get('user') ?? '', ok });
        if (ok) redirect('/account', { 'set-cookie': `session=${SESSION}; Path=/; HttpOnly` });
        else redirect('/login?failed=1');
      });
      return;
    }
    switch (url.pathname) {
      case '/login':
        return send(
          html(
            `<form method="post" action="/login"><label>User <input id="user" name="user"></label>` +
              `<label>Password <input id="password" name="password" type="password"></label><button id="go">Sign in</button></form>` +
              (url.searchParams.has('failed') ? '<p id="failed">Wrong password</p>' : ''),
          ),
        );
      case '/account':
        if (!signedIn) return redirect('/login');
        return send(
          html(
            `<h1 id="welcome">Welcome, ada</h1><a id="orders" href="/orders">Orders</a> ` +
              `<a id="leak" href="http://127.0.0.1:${secretPort()}/steal">Elsewhere</a>`,
          ),
        );
      case '/orders':
        if (!signedIn) return redirect('/login');
        return send(
          html(
            `<select id="size" onchange="document.getElementById('chosen').textContent = this.value"><option value="s">S</option><option value="m">M</option><option value="l">L</option></select>` +
              `<span id="chosen"></span> <label><input id="gift" type="checkbox"> gift</label>` +
              `<nav id="menu" style="display:inline-block;padding:10px">Menu<div id="items"><a id="detail" href="/detail">Detail</a></div></nav>`,
            '#items{display:none}#menu:hover #items{display:block}',
          ),
        );
      // Needs no sign-in: a long page, a spinner that goes, a box ticked already, a request that ends late.
      case '/widgets':
        return send(
          html(
            `<div id="spinner" style="width:50px;height:50px;background:#00f">loading</div><label><input id="news" type="checkbox" checked> news</label>` +
              `<div style="height:3000px"></div><div id="bottom" class="ok" style="height:720px"></div>` +
              `<script>setTimeout(() => document.getElementById('spinner').remove(), 300); setTimeout(() => fetch('/slow'), 200);</script>`,
          ),
        );
      // A GET form: what is typed ends up in the next page's URL.
      case '/search':
        return send(html('<form action="/results"><input id="q" name="q"></form>'));
      case '/results':
        return send(html(`<p id="results">results</p><script>console.log(location.href)</script>`));
      // Its button freezes the page's main thread for good: nothing in the page answers afterwards.
      case '/freeze':
        return send(html('<button id="freeze" style="width:200px;height:50px" onclick="setTimeout(() => { for (;;) {} }, 50)">freeze</button>'));
      case '/slow':
        return void setTimeout(() => res.writeHead(204).end(), 300);
      case '/detail':
        if (!signedIn) return redirect('/login');
        return send(html('<p id="done">Order detail</p><script>document.body.className = "ok"</script>'));
      default:
        return res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  const origin = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
  return { origin, logins, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

const ENV = { PRIVATE_NETWORK_ALLOWLIST: '127.0.0.2', NAVIGATION_TIMEOUT_MS: '8000', CAPTURE_TIMEOUT_MS: '30000' };

/** The sign-in steps: the password from credentials, Enter to submit the form. */
const SIGN_IN = [
  { action: 'fill', selector: '#user', value: 'ada' },
  { action: 'fill', selector: '#password', valueFrom: 'password' },
  { action: 'press', selector: '#password', key: 'Enter' },
  { action: 'waitFor', selector: '#welcome' },
];

describe('journeys: steps in real Chromium, every navigation through the guard', () => {
  let renderer: Renderer;
  let rendererLogs: ReturnType<typeof capturedLogger>;
  let secret: SecretServer;
  let site: Awaited<ReturnType<typeof startJourneySite>>;

  before(async () => {
    secret = await startSecretServer();
    site = await startJourneySite(() => secret.port);
    rendererLogs = capturedLogger();
    renderer = await createChromiumRenderer(testConfig(ENV).renderer, rendererLogs.logger);
  });
  after(async () => {
    await renderer?.close();
    await site?.close();
    await secret?.close();
  });
  beforeEach(() => {
    secret.reset();
    site.logins.length = 0;
  });

  describeEachVariant(ENV, () => renderer, (api) => {
    it('signs in through a real form (session cookie on POST, then a redirect) and captures the page behind it, with each step reported', async () => {
      const response = await api.post({ url: `${site.origin}/login`, removeAds: false, steps: SIGN_IN, credentials: { password: PASSWORD } });
      expectOk(response);
      expect(site.logins).to.deep.equal([{ user: 'ada', ok: true }]);
      const { steps } = response.body.journey;
      expect(steps.map((step: { action: string; status: string }) => `${step.action}:${step.status}`)).to.deep.equal(['fill:ok', 'fill:ok', 'press:ok', 'waitFor:ok']);
      for (const step of steps) expect(step.durationMs).to.be.a('number').at.least(0);
      expect(steps[1]).to.deep.equal({ action: 'fill', selector: '#password', status: 'ok', durationMs: steps[1].durationMs });
      expect(JSON.stringify(response.body)).to.not.include(PASSWORD);
    });

    it('a multi-page flow: a link, a <select>, a checkbox, a hover menu and mid-journey pictures', async () => {
      const response = await api.post({
        url: `${site.origin}/login`,
        removeAds: false,
        credentials: { password: PASSWORD },
        steps: [
          ...SIGN_IN,
          { action: 'capture', name: 'account' },
          { action: 'click', selector: '#orders' },
          { action: 'select', selector: '#size', value: 'm' },
          { action: 'waitFor', selector: '#chosen' },
          { action: 'check', selector: '#gift' },
          { action: 'hover', selector: '#menu' },
          { action: 'click', selector: '#detail' },
          { action: 'waitFor', url: `${site.origin}/det*` },
          { action: 'capture', name: 'detail' },
        ],
      });
      expectOk(response);
      const { steps, captures } = response.body.journey;
      expect(steps.every((step: { status: string }) => step.status === 'ok'), JSON.stringify(steps)).to.equal(true);
      expect(captures.map((capture: { name: string }) => capture.name)).to.deep.equal(['account', 'detail']);
      expect(near(colourAt(captures[1].image, 640, 360), GREEN), 'the detail page is green').to.equal(true);
      expect(near(colourAt(response.body.image, 640, 360), GREEN), 'the final picture is the detail page').to.equal(true);
    });

    it('a step that never succeeds fails the capture with a 422 in bounded time: which step, why, the report and a picture', async () => {
      const response = await api.post({
        url: `${site.origin}/login`,
        removeAds: false,
        credentials: { password: PASSWORD },
        steps: [...SIGN_IN, { action: 'click', selector: '#nowhere', timeout: 1500 }, { action: 'capture', name: 'never' }],
      });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(422);
      expect(response.body.success).to.equal(false);
      expect(response.body.error).to.equal('Step 5 of 6 (click "#nowhere") failed: no element matching "#nowhere" became visible within 1500 ms');
      const { steps, failedStep } = response.body.journey;
      expect(failedStep).to.equal(4);
      expect(steps.map((step: { status: string }) => step.status)).to.deep.equal(['ok', 'ok', 'ok', 'ok', 'failed', 'skipped']);
      expect(steps[4]).to.include({ reason: 'selector-not-visible' });
      expect(steps[5]).to.not.have.property('durationMs');
      expect(decodeDataUri(response.body.image).png.width, 'the page when the step failed').to.equal(1280);
      expect(JSON.stringify(response.body)).to.not.include(PASSWORD);
    });

    it('a link a step follows to a refused address fails the step (navigation refused by the guard), and no request reaches that address', async () => {
      const response = await api.post({ url: `${site.origin}/login`, removeAds: false, credentials: { password: PASSWORD }, steps: [...SIGN_IN, { action: 'click', selector: '#leak' }] });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(422);
      expect(response.body.journey.steps[4]).to.include({ action: 'click', status: 'failed', reason: 'navigation-refused' });
      expect(response.body.error).to.match(/^Step 5 of 5 \(click "#leak"\) failed: the navigation was refused: Forbidden: 127\.0\.0\.1 is a loopback address/);
      expect(secret.hits()).to.equal(0);
    });

    it('a goto to a refused address is refused before the browser asks: zero requests reach it', async () => {
      const response = await api.post({ url: `${site.origin}/login`, removeAds: false, steps: [{ action: 'goto', url: `http://127.0.0.1:${secret.port}/steal` }] });
      expect(response.status).to.equal(422);
      expect(response.body.journey.steps[0]).to.include({ action: 'goto', status: 'failed', reason: 'navigation-refused' });
      expect(secret.hits()).to.equal(0);
    });

    it('scroll, waitFor hidden and networkIdle, uncheck; an unknown key fails its step (action-failed)', async () => {
      const response = await api.post({
        url: `${site.origin}/widgets`,
        removeAds: false,
        steps: [
          { action: 'waitFor', selector: '#spinner', state: 'hidden' },
          { action: 'waitFor', networkIdle: true },
          { action: 'uncheck', selector: '#news' },
          { action: 'scroll', y: 500 },
          { action: 'scroll', selector: '#bottom' },
        ],
      });
      expectOk(response);
      expect(response.body.journey.steps.map((step: { status: string }) => step.status)).to.deep.equal(['ok', 'ok', 'ok', 'ok', 'ok']);
      expect(near(colourAt(response.body.image, 640, 360), GREEN), 'scrolled to the green block').to.equal(true);
      const key = await api.post({ url: `${site.origin}/widgets`, removeAds: false, steps: [{ action: 'press', key: 'NotAKey' }] });
      expect(key.status).to.equal(422);
      expect(key.body.error).to.equal('Step 1 of 1 (press NotAKey) failed: "NotAKey" is not a key name (e.g. Enter, Tab, ArrowDown, a)');
      expect(key.body.journey.steps[0]).to.include({ reason: 'action-failed' });
    });

    it('a typed value the page echoes (a GET form\'s URL, a console line) is redacted from the page report and from a step\'s error', async () => {
      const typed = 'typed-secret-query';
      const steps = [
        { action: 'fill', selector: '#q', value: typed },
        { action: 'press', selector: '#q', key: 'Enter' },
        { action: 'waitFor', selector: '#results' },
      ];
      const reported = await api.post({ url: `${site.origin}/search`, removeAds: false, report: true, steps });
      expectOk(reported);
      expect(JSON.stringify(reported.body.report)).to.include('[redacted]');
      const failed = await api.post({ url: `${site.origin}/search`, removeAds: false, steps: [...steps, { action: 'waitFor', url: '*/elsewhere', timeout: 300 }] });
      expect(failed.status).to.equal(422);
      expect(failed.body.error).to.match(/^Step 4 of 4 \(waitFor "\*\/elsewhere"\) failed: the page's URL did not match "\*\/elsewhere" within 300 ms \(it is "http:\/\/127\.0\.0\.2:\d+\/results\?q=\[redacted\]"\)$/);
      for (const body of [reported.body, failed.body]) expect(JSON.stringify(body)).to.not.include(typed);
    });

    it('bad steps answer 400 with every mistake joined by "; ", naming the step and never a value', async () => {
      const response = await api.post({
        url: `${site.origin}/login`,
        credentials: { password: PASSWORD },
        steps: [
          { action: 'fill', selector: '#user', value: 'x', valueFrom: 'password' },
          { action: 'evaluate', script: 'alert(1)' },
          { action: 'click', selector: '#a', timeout: 999999 },
          { action: 'goto' },
          { action: 'fill', selector: '#p', valueFrom: 'missing' },
        ],
      });
      expect(response.status).to.equal(400);
      expect(response.body).to.deep.equal({
        success: false,
        error: [
          'steps[0] must be {"action": "fill", "selector": ..., and "value" or "valueFrom" (a credential\'s name), not both}, with an optional "timeout"',
          'steps[1] must be an object whose "action" is one of goto, fill, click, press, select, check, uncheck, hover, scroll, waitFor, capture',
          'steps[2].timeout must be an integer number of milliseconds from 1 to 30000',
          'steps[3] must be {"action": "goto", "url": an http(s) URL}, with an optional "timeout"',
        ].join('; '),
      });
      const missing = await api.post({ url: `${site.origin}/login`, credentials: { password: PASSWORD }, steps: [{ action: 'fill', selector: '#p', valueFrom: 'missing' }] });
      expect(missing.body).to.deep.equal({ success: false, error: 'steps[0].valueFrom names "missing", which credentials does not hold' });
      const selector = await api.post({ url: `${site.origin}/login`, steps: [{ action: 'click', selector: '#1st' }] });
      expect(selector.body).to.deep.equal({ success: false, error: 'steps[0].selector is not a valid CSS selector: "#1st"' });
      const tooMany = await api.post({ url: `${site.origin}/login`, steps: Array.from({ length: 51 }, () => ({ action: 'hover', selector: 'body' })) });
      expect(tooMany.body.error).to.equal('steps must be a list of at most 50 steps, each an object whose "action" is one of goto, fill, click, press, select, check, uncheck, hover, scroll, waitFor, capture');
    });
  });

  describe('a step bounded by its timeout even when the page stops answering', () => {
    it('a capture step on a frozen page fails at its timeout (422, reason timeout), well before the capture deadline', async () => {
      const app = createApp({ config: testConfig(ENV), renderer, logger: silentLogger });
      const response = await request(app.callback())
        .post('/screenshot')
        .set('Content-Type', 'application/json')
        .send({ url: `${site.origin}/freeze`, removeAds: false, steps: [{ action: 'click', selector: '#freeze' }, { action: 'capture', name: 'frozen', timeout: 1000 }] });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(422);
      expect(response.body.error).to.equal('Step 2 of 2 (capture "frozen") failed: it did not finish within its timeout of 1000 ms');
      expect(response.body.journey.steps[1]).to.include({ status: 'failed', reason: 'timeout' });
    });
  });

  describe('a credential never leaves the capture: answer, error, logs, metrics, cache, job row', () => {
    let dataDir: string;
    let store: Store;
    let captures: CaptureJobs;
    let app: ReturnType<typeof createApp>;
    let apiLogs: ReturnType<typeof capturedLogger>;
    before(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-journeys-'));
      apiLogs = capturedLogger();
      const config = testConfig({ ...ENV, DATA_DIR: dataDir, JOB_POLL_INTERVAL_MS: '50' });
      store = openSqliteStore({ dataDir });
      captures = createCaptureJobs({ store, renderer, config: config.captures, logger: apiLogs.logger, guard: createNetworkGuard(config.renderer.networkAllowlist) });
      captures.runner.start();
      const resultCache = await openDiskCache({ dir: path.join(dataDir, 'result-cache'), maxBytes: 50 * 1024 * 1024 });
      app = createApp({ config, renderer, logger: apiLogs.logger, resultCache, captures });
    });
    after(async () => {
      await captures.runner.stop(1000);
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const post = (route: string, body: object) => request(app.callback()).post(route).set('Content-Type', 'application/json').send(body);

    it('is in no answer, error, log line, metric or cache file, and not in the job row once the job has ended', async () => {
      const good = await post('/screenshot', { url: `${site.origin}/login`, removeAds: false, cacheTtl: 60, steps: SIGN_IN, credentials: { password: PASSWORD } });
      expectOk(good);
      expect(good.body.cached, 'a journey is never answered from the cache').to.equal(undefined);
      const inline = await post('/screenshot', { url: `${site.origin}/login`, removeAds: false, steps: [{ action: 'fill', selector: '#password', value: PASSWORD }, { action: 'waitFor', selector: '#nowhere', timeout: 500 }] });
      expect(inline.status).to.equal(422);
      const bad = await post('/screenshot', { url: `${site.origin}/login`, steps: [{ action: 'fill', selector: '#password', valueFrom: 'password' }, { action: 'fill', selector: '#nowhere', valueFrom: 'password', timeout: 500 }], credentials: { password: PASSWORD } });
      expect(bad.status).to.equal(422);
      const submitted = await post('/captures', { url: `${site.origin}/login`, removeAds: false, steps: SIGN_IN, credentials: { password: PASSWORD } });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
      await eventually('the capture ends', async () => (await store.getJob(submitted.body.id))?.state === 'succeeded', 30_000);
      const status = await request(app.callback()).get(`/captures/${submitted.body.id}`);
      expect(status.body.result.journey.steps).to.have.length(4);
      const metrics = await request(app.callback()).get('/metrics');
      const cacheFiles = readdirSync(path.join(dataDir, 'result-cache'), { recursive: true }).map(String);
      const job = await store.getJob(submitted.body.id);
      const outputs: [string, string][] = [
        ['answer', JSON.stringify(good.body)],
        ['inline value error', JSON.stringify(inline.body)],
        ['credential error', JSON.stringify(bad.body)],
        ['status', JSON.stringify(status.body)],
        ['API logs', apiLogs.lines.join('\n')],
        ['renderer logs', rendererLogs.lines.join('\n')],
        ['metrics', metrics.text],
        ['cache files', cacheFiles.join('\n')],
        ['job row', JSON.stringify(job)],
      ];
      for (const [where, text] of outputs) expect(text, where).to.not.include(PASSWORD);
      expect(apiLogs.lines.length).to.be.greaterThan(0);
    });
  });

  describe('through the renderer service (RENDERER_URL): the journey, its pictures and its 422 cross the wire', () => {
    let service: RendererService;
    let remote: Renderer;
    let post: (body: object, accept?: string) => request.Test;
    before(async () => {
      service = await startRendererService(renderer);
      const config = testConfig({ ...ENV, RENDERER_URL: service.url });
      remote = await createRemoteRenderer(config.remoteRenderer!, silentLogger);
      const app = createApp({ config, renderer: remote, logger: silentLogger });
      post = (body, accept = 'application/json') => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').set('Accept', accept).send(body);
    });
    after(async () => {
      await remote.close();
      await service.close();
    });

    it('answers the step report and the capture steps\' pictures as an in-process renderer does, and a failed step\'s 422 with its picture', async () => {
      const ok = await post({ url: `${site.origin}/login`, removeAds: false, credentials: { password: PASSWORD }, steps: [...SIGN_IN, { action: 'capture', name: 'account' }] });
      expectOk(ok);
      expect(ok.body.journey.steps).to.have.length(5);
      expect(decodeDataUri(ok.body.journey.captures[0].image).png.width).to.equal(1280);
      const failed = await post({ url: `${site.origin}/login`, removeAds: false, steps: [{ action: 'waitFor', selector: '#welcome', timeout: 800 }] });
      expect(failed.status).to.equal(422);
      expect(failed.body.error).to.equal('Step 1 of 1 (waitFor "#welcome") failed: no element matching "#welcome" became visible within 800 ms');
      expect(failed.body.journey.steps[0]).to.include({ status: 'failed', reason: 'selector-not-visible' });
      expect(decodeDataUri(failed.body.image).png.width).to.equal(1280);
    });

    it('a raw image answer carries the step report in a header, without pictures', async () => {
      const raw = await post({ url: `${site.origin}/login`, removeAds: false, credentials: { password: PASSWORD }, steps: SIGN_IN }, 'image/png');
      expect(raw.status).to.equal(200);
      expect(raw.headers['content-type']).to.equal('image/png');
      const steps = JSON.parse(raw.headers[JOURNEY_HEADER.toLowerCase()] as string);
      expect(steps.map((step: { action: string; status: string }) => `${step.action}:${step.status}`)).to.deep.equal(['fill:ok', 'fill:ok', 'press:ok', 'waitFor:ok']);
    });
  });

  describe('hosted: render links refuse steps; a restricted key\'s domains hold for every step; asynchronous captures take steps', () => {
    let hosted: HostedHarness;
    before(async () => {
      hosted = await startHosted({ renderer, env: { ...ENV, JOB_POLL_INTERVAL_MS: '50' }, captures: true });
    });
    after(() => hosted.close());

    it('a render link with steps or credentials is the documented 400', async () => {
      const created = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains: [] });
      const key = await hosted.api(hosted.fullKey).post('/api/keys', { name: 'links', siteId: created.body.id });
      const link = (options: [string, string][]) => signRenderLink({ origin: 'http://x', options, keyId: key.body.id, signingSecret: key.body.signingSecret }).slice('http://x'.length);
      for (const extra of [[['steps', '[]']], [['steps.action', 'click']], [['credentials.password', 'x']]] as [string, string][][]) {
        const answer = await request(hosted.app.callback()).get(link([['url', `${site.origin}/login`], ...extra]));
        expect(answer.status, JSON.stringify(extra)).to.equal(400);
        expect(answer.body, JSON.stringify(extra)).to.deep.equal({ success: false, error: STEPS_IN_LINK });
      }
    });

    it('a restricted key\'s goto step outside its domains is a 403 before anything loads', async () => {
      const created = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains: ['127.0.0.2'] });
      const restricted = await hosted.api(hosted.fullKey).post('/api/keys', { name: 'r', siteId: created.body.id, restrictDomains: true });
      const refused = await hosted.api(restricted.body.key).post('/api/screenshot', { url: `${site.origin}/login`, steps: [{ action: 'goto', url: 'https://example.com/' }] });
      expect(refused.status).to.equal(403);
      expect(secret.hits()).to.equal(0);
      const allowed = await hosted.api(restricted.body.key).post('/api/screenshot', { url: `${site.origin}/login`, removeAds: false, credentials: { password: PASSWORD }, steps: SIGN_IN });
      expect(allowed.status, JSON.stringify(allowed.body).slice(0, 300)).to.equal(200);
    });

    it('a restricted key\'s journey that follows a link off its domains fails that step (the domain refusal), and the link\'s host gets no request', async () => {
      const created = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains: ['127.0.0.2'] });
      const restricted = await hosted.api(hosted.fullKey).post('/api/keys', { name: 'r2', siteId: created.body.id, restrictDomains: true });
      const response = await hosted.api(restricted.body.key).post('/api/screenshot', { url: `${site.origin}/login`, removeAds: false, credentials: { password: PASSWORD }, steps: [...SIGN_IN, { action: 'click', selector: '#leak' }] });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(422);
      expect(response.body.journey.steps[4]).to.include({ status: 'failed', reason: 'navigation-refused' });
      expect(response.body.error).to.equal('Step 5 of 5 (click "#leak") failed: the navigation was refused: Domain not allowed: 127.0.0.1 is not among the allowed domains (the page navigated there)');
      expect(secret.hits()).to.equal(0);
    });

    it('an asynchronous capture (POST /api/captures) runs the journey and its status holds the step report', async () => {
      const created = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains: [] });
      const submitted = await hosted.api(hosted.fullKey).post('/api/captures', { site_id: created.body.id, url: `${site.origin}/login`, removeAds: false, credentials: { password: PASSWORD }, steps: SIGN_IN });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
      let status: request.Response | undefined;
      await eventually('the capture ends', async () => {
        status = await hosted.api(hosted.fullKey).get(`/api/captures/${submitted.body.id}`);
        return status.body.status === 'succeeded' || status.body.status === 'failed';
      }, 30_000);
      expect(status!.body.status, JSON.stringify(status!.body).slice(0, 300)).to.equal('succeeded');
      expect(status!.body.result.journey.steps.map((step: { status: string }) => step.status)).to.deep.equal(['ok', 'ok', 'ok', 'ok']);
      expect(JSON.stringify(status!.body)).to.not.include(PASSWORD);
    });
  });
});
