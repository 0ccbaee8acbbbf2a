import { expect } from 'chai';
import request from 'supertest';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../../../lib/env.ts';
import type { Logger } from '../../../lib/logger.ts';
import { createApp } from '../../../services/api/src/app.ts';
import { loadApiConfig } from '../../../services/api/src/config.ts';
import { apiRegistry } from '../../../services/api/src/metrics.ts';
import { createRemoteRenderer, type RemoteRenderer } from '../../../services/api/src/remote-renderer.ts';
import { closeImageDecoder, decodeAnyDataUri, near } from '../../support/decode-image.ts';
import { closedPort, page, startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { decodeDataUri, sharedRenderer, silentLogger, startRenderer, testConfig } from '../../support/harness.ts';
import { captureLog } from '../../support/log-capture.ts';
import { pdfInfo, pdfOfDataUri, rawBytes } from '../../support/pdf.ts';
import { sampleValue, startRendererService, type RendererService } from '../../support/renderer-service.ts';
import { eventually } from '../../support/eventually.ts';

const RED: [number, number, number] = [255, 0, 0];
const BLUE: [number, number, number] = [0, 0, 255];

describe('dispatch to renderer services (RENDERER_URL, real Chromium behind HTTP)', () => {
  let fixtures: FixtureServer;
  let service: RendererService;
  const remotes: RemoteRenderer[] = [];
  const services: RendererService[] = [];

  before(async () => {
    fixtures = await startFixtureServer();
    service = await startRendererService(await sharedRenderer());
  });
  afterEach(async () => {
    await Promise.all(remotes.splice(0).map((remote) => remote.close()));
    await Promise.all(services.splice(0).map((s) => s.close()));
  });
  after(async () => {
    await Promise.all([service.close(), fixtures.close()]);
  });

  async function remoteApp(urls: string[], env: Record<string, string> = {}, logger: Logger = silentLogger) {
    const config = testConfig({ RENDERER_URL: urls.join(','), ...env });
    const renderer = await createRemoteRenderer(config.remoteRenderer!, logger);
    remotes.push(renderer);
    return { app: createApp({ config, renderer, logger }), renderer };
  }
  const capture = (app: ReturnType<typeof createApp>, body: Record<string, unknown>) =>
    request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);

  it('captures through the renderer service: the same PNG and fields as in-process', async () => {
    const { app } = await remoteApp([service.url]);
    const response = await capture(app, { url: fixtures.url('/geometry'), quality: 'retina' });
    expect(response.status, JSON.stringify(response.body).slice(0, 200)).to.equal(200);
    expect(response.body).to.include({ success: true, quality: 'retina', width: 5120, height: 2880 });
    const image = decodeDataUri(response.body.image);
    expect([image.png.width, image.png.height]).to.deep.equal([5120, 2880]);
    expect(response.body.fileSize).to.equal(image.bytes.length);
    expect(image.rgb(5, 5)).to.deep.equal(RED);
    expect(image.rgb(5115, 2875)).to.deep.equal(BLUE);
    expect(await sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'retina', outcome: 'success' })).to.equal(1);
  });

  it('carries the options beyond the spec across the wire: a webp element capture in dark mode, and the 400 of a bad selector', async () => {
    const { app } = await remoteApp([service.url]);
    const html = page('<div id="box"></div>', {
      style: '#box{margin:50px;width:120px;height:80px;background:#ffffff} @media (prefers-color-scheme: dark){#box{background:#0000ff}}',
    });
    const response = await capture(app, { url: fixtures.url(`/echo?html=${encodeURIComponent(html)}`), format: 'webp', selector: '#box', darkMode: true });
    expect(response.status, JSON.stringify(response.body).slice(0, 200)).to.equal(200);
    expect(response.body).to.include({ width: 120, height: 80, truncated: false });
    const image = await decodeAnyDataUri(response.body.image);
    expect(image.mimeType).to.equal('image/webp');
    expect([image.png.width, image.png.height]).to.deep.equal([120, 80]);
    expect(near(image.rgb(60, 40), BLUE)).to.equal(true);
    await closeImageDecoder();

    const invalid = await capture(app, { url: fixtures.url('/simple'), hideSelectors: ['#1st'] });
    expect(invalid.status).to.equal(400);
    expect(invalid.body).to.deep.equal({ success: false, error: 'hideSelectors[0] is not a valid CSS selector: "#1st"' });
  });

  it('carries a PDF across the wire: format pdf with its options, the JSON answer and the raw one, and its 400 past the last page', async () => {
    const { app } = await remoteApp([service.url]);
    const url = fixtures.url('/tall?height=3000');
    const response = await capture(app, { url, format: 'pdf', pdf: { paper: 'Legal', landscape: true, pageRanges: '2-' } });
    expect(response.status, JSON.stringify(response.body).slice(0, 200)).to.equal(200);
    const bytes = pdfOfDataUri(response.body.image);
    const info = await pdfInfo(bytes);
    expect([info.widthPt, info.heightPt]).to.deep.equal([1008, 612]);
    // 3000 CSS px on 816 px tall pages: four pages, the first left out.
    expect(info.pages).to.equal(3);
    expect(response.body).to.include({ width: 1344, height: 816, fileSize: bytes.length });
    const raw = await request(app.callback())
      .post('/screenshot')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/pdf')
      .send({ url, format: 'pdf' })
      .buffer(true)
      .parse(rawBytes);
    expect(raw.type).to.equal('application/pdf');
    expect((await pdfInfo(raw.body as Buffer)).pages).to.equal(3);
    const past = await capture(app, { url, format: 'pdf', pdf: { pageRanges: '9' } });
    expect(past.status).to.equal(400);
    expect(past.body).to.deep.equal({ success: false, error: 'pdf.pageRanges "9" selects no page of the document: it has fewer pages' });
  });

  it("rethrows the renderer's typed error: 500 with the network error", async () => {
    const { app } = await remoteApp([service.url]);
    const response = await capture(app, { url: `http://127.0.0.1:${await closedPort()}/` });
    expect(response.status).to.equal(500);
    expect(response.body).to.deep.equal({ success: false, error: 'Screenshot generation failed: net::ERR_CONNECTION_REFUSED' });
  });

  it("rethrows the renderer's 408 when the page's navigation timed out there", async () => {
    const slowPool = await startRenderer(testConfig({ NAVIGATION_TIMEOUT_MS: '1000', RENDER_CONCURRENCY: '1' }));
    const slowService = await startRendererService(slowPool);
    services.push(slowService);
    const { app } = await remoteApp([slowService.url]);
    const response = await capture(app, { url: fixtures.url('/slow?delay=5000') });
    expect(response.status).to.equal(408);
    expect(response.body).to.deep.equal({ success: false, error: 'Navigation timeout: the page took too long to load' });
  });

  it('answers 408 past RENDERER_TIMEOUT_MS and cancels the capture in the renderer', async () => {
    const { app } = await remoteApp([service.url], { RENDERER_TIMEOUT_MS: '1000' });
    const cancelledBefore = (await sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'standard', outcome: 'cancelled' })) ?? 0;
    const response = await capture(app, { url: fixtures.url('/slow?delay=20000') });
    expect(response.status).to.equal(408);
    expect(response.body).to.deep.equal({ success: false, error: 'Navigation timeout: the page took too long to load or respond' });
    await eventually('the renderer recorded the capture as cancelled', async () =>
      (await sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'standard', outcome: 'cancelled' })) === cancelledBefore + 1,
    );
  });

  it('cancels the capture in the renderer when the client goes away', async () => {
    const { app } = await remoteApp([service.url]);
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      // The previous test's cancelled capture may still hold its slot: "reached the pool" must mean this one.
      const idle = await sharedRenderer();
      await eventually('the pool is idle', () => idle.stats().inFlight === 0 && idle.stats().queued === 0);
      const cancelledBefore = (await sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'mobile', outcome: 'cancelled' })) ?? 0;
      const client = new AbortController();
      const pending = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/screenshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: fixtures.url('/slow?delay=20000'), quality: 'mobile' }),
        signal: client.signal,
      }).catch((err: Error) => err.name);
      const pool = await sharedRenderer();
      await eventually('the capture reached the pool', () => pool.stats().inFlight > 0);
      client.abort();
      expect(await pending).to.equal('AbortError');
      await eventually('the renderer recorded the capture as cancelled', async () =>
        (await sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'mobile', outcome: 'cancelled' })) === cancelledBefore + 1,
      );
      await eventually('the pool slot was freed', () => pool.stats().inFlight === 0);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("counts its own captures in its stats at once, not only at the renderer's next report", async () => {
    // No probe during the test: what stats() says of the capture comes from this process's bookkeeping.
    const { renderer } = await remoteApp([service.url], { RENDERER_PROBE_INTERVAL_MS: '60000' });
    const pool = await sharedRenderer();
    await eventually('the pool is idle', () => pool.stats().inFlight === 0 && pool.stats().queued === 0);
    await renderer.probe();
    const idle = renderer.stats();
    expect(idle).to.include({ inFlight: 0, queued: 0 });
    expect(idle.capacity).to.equal(pool.stats().capacity);
    const client = new AbortController();
    const pending = renderer.capture({ url: fixtures.url('/slow?delay=20000'), quality: 'standard', fullPage: false, removeAds: false }, { signal: client.signal }).catch((err: Error) => err.name);
    expect(renderer.stats().inFlight, 'the moment it is sent').to.equal(1);
    await eventually('the capture reached the pool', () => pool.stats().inFlight > 0);
    client.abort();
    expect(await pending).to.equal('AbortError');
    // An aborted capture's answer carries no report: the next one says the slot is free again.
    await eventually('the pool slot was freed', () => pool.stats().inFlight === 0);
    await renderer.probe();
    expect(renderer.stats()).to.include({ inFlight: 0, queued: 0 });
  });

  it('sends a capture whose connection was refused to another renderer, and leaves the refusing one out', async () => {
    const pool = await sharedRenderer();
    const [first, second] = [await startRendererService(pool), await startRendererService(pool)] as const;
    services.push(first, second);
    const log = captureLog('viewfinder-api');
    // A long probe interval: the API learns that `first` is gone only from the failed capture.
    const { app, renderer } = await remoteApp([first.url, second.url], { RENDERER_PROBE_INTERVAL_MS: '60000' }, log.logger);
    expect(renderer.isReady()).to.equal(true);
    await first.close();
    const retriesBefore = (await sampleValue(apiRegistry, 'viewfinder_renderer_retries_total')) ?? 0;

    // Least-loaded with random tie-breaks: the closed renderer is picked sooner or later, once.
    const retried = () => log.lines().find((line) => line.msg === 'Renderer refused the connection; trying another');
    let captures = 0;
    while (!retried() && captures < 20) {
      const response = await capture(app, { url: fixtures.url('/simple') });
      captures += 1;
      expect(response.status, `capture ${captures}: ${JSON.stringify(response.body).slice(0, 200)}`).to.equal(200);
    }
    const response = await capture(app, { url: fixtures.url('/simple') });
    expect(response.status).to.equal(200);
    expect((await sampleValue(apiRegistry, 'viewfinder_renderer_retries_total')) ?? 0).to.equal(retriesBefore + 1);
    expect(await sampleValue(second.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'standard', outcome: 'success' })).to.equal(captures + 1);
    expect(await sampleValue(apiRegistry, 'viewfinder_renderers_ready')).to.equal(1);
    expect(await sampleValue(apiRegistry, 'viewfinder_renderers_configured')).to.equal(2);
    expect(retried()).to.include({ renderer: new URL(first.url).origin, retryOn: new URL(second.url).origin, reason: 'ECONNREFUSED' });
  });

  it('retries, on the same renderer, a capture whose kept-alive socket was closed as it arrived, before any byte of the answer', async () => {
    // A relay in front of the renderer that, like a renderer closing an idle socket at that moment,
    // drops a kept-alive connection when a second request arrives on it, before any byte of the answer.
    const target = new URL(service.url);
    const relay = net.createServer((client) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      let answered = false;
      upstream.on('data', (chunk) => {
        answered = true;
        client.write(chunk);
      });
      client.on('data', (chunk) => (answered ? (client.destroy(), upstream.destroy()) : upstream.write(chunk)));
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const log = captureLog('viewfinder-api');
      const { app } = await remoteApp([`http://127.0.0.1:${(relay.address() as AddressInfo).port}`], { RENDERER_PROBE_INTERVAL_MS: '60000' }, log.logger);
      const done = () => sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'standard', outcome: 'success' });
      const before = (await done()) ?? 0;
      const retriesBefore = (await sampleValue(apiRegistry, 'viewfinder_renderer_retries_total')) ?? 0;
      for (const attempt of [1, 2]) {
        const response = await capture(app, { url: fixtures.url('/simple') });
        expect(response.status, `capture ${attempt}: ${JSON.stringify(response.body).slice(0, 200)}`).to.equal(200);
      }
      expect((await done()) ?? 0, 'each capture rendered once').to.equal(before + 2);
      expect((await sampleValue(apiRegistry, 'viewfinder_renderer_retries_total')) ?? 0).to.equal(retriesBefore + 1);
      expect(log.lines().find((line) => line.msg === 'Renderer refused the capture before starting it; retrying on another')).to.include({ reason: 'ECONNRESET' });
    } finally {
      relay.close();
    }
  });

  it('answers 503 with Retry-After when no renderer is ready, while the API /readyz stays 200 (it stays in its Service)', async () => {
    const { app } = await remoteApp([`http://127.0.0.1:${await closedPort()}`]);
    const response = await capture(app, { url: fixtures.url('/simple') });
    expect(response.status).to.equal(503);
    expect(response.headers['retry-after']).to.equal('5');
    expect(response.body).to.deep.equal({ success: false, error: 'Service unavailable: no renderer is ready' });
    const readiness = await request(app.callback()).get('/readyz');
    expect({ status: readiness.status, body: readiness.body }).to.deep.equal({ status: 200, body: { status: 'ready' } });
  });

  it('picks up a renderer that becomes ready later, through its status probe', async () => {
    const port = await closedPort();
    const { app, renderer } = await remoteApp([`http://127.0.0.1:${port}`], { RENDERER_PROBE_INTERVAL_MS: '100' });
    expect((await capture(app, { url: fixtures.url('/simple') })).status).to.equal(503);
    services.push(await startRendererService(await sharedRenderer(), { port }));
    await eventually('the API saw the renderer ready', () => renderer.isReady());
    expect((await request(app.callback()).get('/readyz')).status).to.equal(200);
    expect((await capture(app, { url: fixtures.url('/simple') })).status).to.equal(200);
  });

  it('answers 500 when the renderer refuses RENDERER_TOKEN, and logs why without the token', async () => {
    const guarded = await startRendererService(await sharedRenderer(), { token: 'the-right-renderer-token' });
    services.push(guarded);
    const log = captureLog('viewfinder-api');
    const { app } = await remoteApp([guarded.url], { RENDERER_TOKEN: 'a-wrong-renderer-token' }, log.logger);
    const response = await capture(app, { url: fixtures.url('/simple') });
    expect(response.status).to.equal(500);
    expect(response.body).to.deep.equal({ success: false, error: 'Screenshot generation failed' });
    expect(log.lines().find((line) => line.level === 50)).to.include({ status: 401, msg: 'Renderer refused the capture request; check RENDERER_TOKEN and versions' });
    expect(log.text()).to.not.include('a-wrong-renderer-token');
    expect(log.text()).to.not.include('the-right-renderer-token');
  });

  it('sends RENDERER_TOKEN as a bearer token that the renderer accepts', async () => {
    const guarded = await startRendererService(await sharedRenderer(), { token: 'the-right-renderer-token' });
    services.push(guarded);
    const { app } = await remoteApp([guarded.url], { RENDERER_TOKEN: 'the-right-renderer-token' });
    expect((await capture(app, { url: fixtures.url('/simple') })).status).to.equal(200);
  });
});

describe('RENDERER_URL and related configuration', () => {
  const load = (env: Record<string, string>) => loadApiConfig({ ...env });

  it('renders in-process when RENDERER_URL is unset', () => {
    expect(load({}).remoteRenderer).to.equal(undefined);
  });

  it('reads a comma-separated list of renderer URLs', () => {
    const config = load({ RENDERER_URL: 'http://r-0:3001, https://r-1.internal/render' });
    expect(config.remoteRenderer?.urls.map(String)).to.deep.equal(['http://r-0:3001/', 'https://r-1.internal/render/']);
  });

  it("defaults RENDERER_TIMEOUT_MS to the renderer's capture timeout plus 5 s, so that the renderer's own 408 comes first", () => {
    const config = load({ RENDERER_URL: 'http://r-0:3001', CAPTURE_TIMEOUT_MS: '20000' });
    expect(config.remoteRenderer).to.include({ timeoutMs: 25_000, connectTimeoutMs: 2000, probeIntervalMs: 2000, probeTimeoutMs: 1500, token: undefined });
  });

  it('rejects a URL that is not http(s)', () => {
    expect(() => load({ RENDERER_URL: 'http://r-0:3001,ftp://r-1' })).to.throw(ConfigError, 'RENDERER_URL must list http(s) URLs, got "ftp://r-1"');
  });

  it('rejects credentials inside RENDERER_URL, which would end up in logs', () => {
    expect(() => load({ RENDERER_URL: 'http://user:secret@r-0:3001' })).to.throw(ConfigError, 'RENDERER_URL must not carry credentials: use RENDERER_TOKEN');
  });
});
