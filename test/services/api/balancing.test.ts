import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '../../../services/api/src/app.ts';
import { estimatedBusy, leastLoaded, newBalancedBackend, captureStarted, captureEnded, recordLoad } from '../../../services/api/src/balancer.ts';
import { createRemoteRenderer, type RemoteRenderer } from '../../../services/api/src/remote-renderer.ts';
import type { RendererEndpoints } from '../../../services/api/src/renderer-endpoints.ts';
import { silentLogger, testConfig } from '../../support/harness.ts';
import { startStubRenderer, type StubRendererService } from '../../support/stub-renderer.ts';
import { eventually } from '../../support/eventually.ts';

/** A discovery source the test changes by hand, as the EndpointSlice watcher would. */
function mutableEndpoints(initial: string[]): RendererEndpoints & { set(urls: string[]): void } {
  let urls = initial.map((u) => new URL(`${u}/`));
  const listeners: Array<() => void> = [];
  return {
    current: () => urls,
    onChange: (listener) => void listeners.push(listener),
    close: () => undefined,
    set(next) {
      urls = next.map((u) => new URL(`${u}/`));
      for (const listener of listeners) listener();
    },
  };
}

describe('the balancer (least-loaded choice)', () => {
  it('prefers a renderer with a free slot over a full one, whatever the order', () => {
    const full = { ...newBalancedBackend(), id: 'full' };
    const free = { ...newBalancedBackend(), id: 'free' };
    recordLoad(full, { capacity: 2, inFlight: 2, queued: 1 });
    recordLoad(free, { capacity: 2, inFlight: 1, queued: 0 });
    for (const random of [0, 0.5, 0.99]) expect(leastLoaded([full, free], undefined, () => random)?.id).to.equal('free');
  });

  it('counts captures sent since the last report, so that a burst spreads instead of piling on one renderer', () => {
    const backends = [0, 1, 2].map((id) => ({ ...newBalancedBackend(), id }));
    for (const backend of backends) recordLoad(backend, { capacity: 1, inFlight: 0, queued: 0 });
    const chosen = [0, 1, 2].map(() => {
      const backend = leastLoaded(backends, undefined, () => 0) as (typeof backends)[number];
      captureStarted(backend);
      return backend.id;
    });
    expect(chosen.sort()).to.deep.equal([0, 1, 2]);
    expect(backends.map(estimatedBusy)).to.deep.equal([1, 1, 1]);
    captureEnded(backends[0]!, { capacity: 1, inFlight: 0, queued: 0 });
    expect(leastLoaded(backends, undefined, () => 0.5)?.id).to.equal(0);
  });

  it('skips renderers that are not ready or are excluded', () => {
    const notReady = { ...newBalancedBackend(), ready: false, id: 'not-ready' };
    recordLoad(notReady, { capacity: 4, inFlight: 0, queued: 0 });
    const excluded = { ...newBalancedBackend(), id: 'excluded' };
    recordLoad(excluded, { capacity: 4, inFlight: 0, queued: 0 });
    expect(leastLoaded([notReady, excluded], excluded)).to.equal(undefined);
    expect(leastLoaded([notReady, excluded])?.id).to.equal('excluded');
  });

  it('gives a renderer that has not reported yet one capture, as if it had one free slot', () => {
    const fresh = { ...newBalancedBackend(), id: 'fresh' };
    const busy = { ...newBalancedBackend(), id: 'busy' };
    recordLoad(busy, { capacity: 4, inFlight: 2, queued: 0 });
    expect(leastLoaded([busy, fresh], undefined, () => 0)?.id).to.equal('fresh');
    captureStarted(fresh);
    expect(leastLoaded([busy, fresh], undefined, () => 0)?.id).to.equal('busy');
  });
});

describe('balancing captures across renderer services (stub renderers behind the real renderer server)', () => {
  const stubs: StubRendererService[] = [];
  const remotes: RemoteRenderer[] = [];
  afterEach(async () => {
    await Promise.all(remotes.splice(0).map((remote) => remote.close()));
    await Promise.all(stubs.splice(0).map((stub) => stub.close()));
  });

  async function startStubs(count: number, delayMs: number, queueLimit = 4): Promise<StubRendererService[]> {
    const started = await Promise.all(Array.from({ length: count }, () => startStubRenderer({ capacity: 1, queueLimit, delayMs: () => delayMs })));
    stubs.push(...started);
    return started;
  }

  async function remoteApp(endpoints: RendererEndpoints, env: Record<string, string> = {}) {
    const config = testConfig({ RENDERER_URL: 'http://127.0.0.1:1', RENDERER_PROBE_INTERVAL_MS: '200', ...env });
    const renderer = await createRemoteRenderer(config.remoteRenderer!, silentLogger, endpoints);
    remotes.push(renderer);
    return { app: createApp({ config, renderer, logger: silentLogger }), renderer };
  }
  const capture = (app: ReturnType<typeof createApp>) =>
    request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url: 'http://127.0.0.1:9/page' });

  it('reports its load on every capture answer and at GET /v1/status', async () => {
    const [stub] = await startStubs(1, 10);
    const status = await fetch(`${stub!.url}/v1/status`).then((r) => r.json());
    expect(status).to.deep.equal({ ready: true, draining: false, freeSlots: 1, capacity: 1, inFlight: 0, queued: 0 });
    const answer = await fetch(`${stub!.url}/v1/captures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/', quality: 'standard', fullPage: false, removeAds: false }),
    });
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('x-renderer-capacity')).to.equal('1');
    expect(answer.headers.get('x-renderer-free-slots')).to.equal('1');
    expect(answer.headers.get('x-renderer-queued')).to.equal('0');
    const refused = await fetch(`${stub!.url}/v1/captures`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).to.equal(400);
    expect(refused.headers.get('x-renderer-free-slots'), 'errors carry the load too').to.equal('1');
  });

  it('never queues a capture on a busy renderer while another has a free slot', async () => {
    const started = await startStubs(3, 400);
    const { app } = await remoteApp(mutableEndpoints(started.map((s) => s.url)));
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all([0, 1, 2].map(() => capture(app)));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
      // Capacity 1 each: any queueing would have shown as a renderer with more captures than rounds.
      expect(started.map((s) => s.renderer.completed())).to.deep.equal([round + 1, round + 1, round + 1]);
    }
  });

  it('sends work to a renderer added under load at once, instead of queueing it on the busy ones', async () => {
    const [a, b] = await startStubs(2, 600);
    const endpoints = mutableEndpoints([a!.url, b!.url]);
    const { app } = await remoteApp(endpoints);
    // supertest sends on then(): start both now.
    const busy = [capture(app).then((r) => r), capture(app).then((r) => r)];
    await eventually('both renderers busy', () => a!.renderer.stats().inFlight === 1 && b!.renderer.stats().inFlight === 1);
    const [c] = await startStubs(1, 600);
    endpoints.set([a!.url, b!.url, c!.url]);
    await eventually('the new renderer reported', async () => (await fetch(`${c!.url}/v1/status`)).ok);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const third = await capture(app);
    expect(third.status).to.equal(200);
    expect(c!.renderer.completed(), 'the added renderer took the capture').to.equal(1);
    expect((await Promise.all(busy)).map((r) => r.status)).to.deep.equal([200, 200]);
  });

  it('stops sending captures to an endpoint as soon as discovery drops it (terminating)', async () => {
    const [a, b] = await startStubs(2, 20);
    const endpoints = mutableEndpoints([a!.url, b!.url]);
    const { app } = await remoteApp(endpoints);
    endpoints.set([b!.url]);
    for (let i = 0; i < 6; i++) expect((await capture(app)).status).to.equal(200);
    expect(a!.renderer.completed()).to.equal(0);
    expect(b!.renderer.completed()).to.equal(6);
  });

  it('answers 429 only when every renderer is full, and then with Retry-After', async () => {
    const started = await startStubs(2, 500, 0);
    const { app } = await remoteApp(mutableEndpoints(started.map((s) => s.url)));
    const answers = await Promise.all([0, 1, 2].map(() => capture(app)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).to.deep.equal([200, 200, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body).to.include({ success: false });
    expect(Number(refused.headers['retry-after'])).to.be.greaterThan(0);
  });

  it('retries on the renderer with room when a stale view sent the capture to a full one (429 there)', async () => {
    const started = await startStubs(2, 400, 0);
    const urls = started.map((s) => s.url);
    // Two API replicas: each sees only its own captures until the next report.
    const one = await remoteApp(mutableEndpoints(urls), { RENDERER_PROBE_INTERVAL_MS: '60000' });
    const two = await remoteApp(mutableEndpoints(urls), { RENDERER_PROBE_INTERVAL_MS: '60000' });
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all([capture(one.app), capture(two.app)]);
      expect(answers.map((a) => a.status), `round ${round}`).to.deep.equal([200, 200]);
    }
    expect(started.map((s) => s.renderer.completed())).to.deep.equal([4, 4]);
  });

  it('retries a capture refused by a draining renderer on another one: the client sees a success', async () => {
    const [a, b] = await startStubs(2, 20);
    const { app, renderer } = await remoteApp(mutableEndpoints([a!.url, b!.url]), { RENDERER_PROBE_INTERVAL_MS: '60000' });
    a!.shutDown();
    const draining = await fetch(`${a!.url}/v1/status`).then((r) => r.json());
    expect(draining).to.include({ ready: false, draining: true });
    for (let i = 0; i < 4; i++) expect((await capture(app)).status).to.equal(200);
    expect(a!.renderer.completed()).to.equal(0);
    expect(b!.renderer.completed()).to.equal(4);
    expect(renderer.isReady()).to.equal(true);
  });

  it('counts a renderer whose status probe outlasts RENDERER_PROBE_TIMEOUT_MS as not ready, and one within it as ready', async () => {
    // A renderer that reports a free slot, 600 ms after being asked.
    const slow = http.createServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ready: true, capacity: 1, inFlight: 0, queued: 0 })), 600);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
      const impatient = await remoteApp(mutableEndpoints([url]), { RENDERER_PROBE_INTERVAL_MS: '60000', RENDERER_PROBE_TIMEOUT_MS: '200' });
      expect(impatient.renderer.isReady()).to.equal(false);
      const patient = await remoteApp(mutableEndpoints([url]), { RENDERER_PROBE_INTERVAL_MS: '60000', RENDERER_PROBE_TIMEOUT_MS: '5000' });
      expect(patient.renderer.isReady()).to.equal(true);
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });

  it("tells the API's own time from the renderer's: Server-Timing on the answer, the overhead in /metrics", async () => {
    const [a, b] = await startStubs(2, 150);
    const { app } = await remoteApp(mutableEndpoints([a!.url, b!.url]), { RENDERER_PROBE_INTERVAL_MS: '60000' });
    const overheadCount = async () => Number(/^viewfinder_api_dispatch_overhead_seconds_count (\S+)/m.exec((await request(app.callback()).get('/metrics')).text)?.[1]);
    const before = await overheadCount();
    for (let i = 0; i < 2; i++) {
      const answer = await capture(app);
      expect(answer.status).to.equal(200);
      const timing = /^renderer;dur=([\d.]+), total;dur=([\d.]+)$/.exec(answer.headers['server-timing'] ?? '');
      expect(timing, answer.headers['server-timing']).to.not.equal(null);
      const [rendererMs, totalMs] = [Number(timing![1]), Number(timing![2])];
      // The stub waited 150 ms (its waitMs); the time on the wire holds that and the HTTP exchange.
      expect(rendererMs).to.be.at.least(answer.body.waitMs as number);
      expect(totalMs).to.be.above(rendererMs);
    }
    expect((await overheadCount()) - before).to.equal(2);
    // Requests that never reached a renderer carry no Server-Timing.
    const invalid = await request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({});
    expect(invalid.status).to.equal(400);
    expect(invalid.headers['server-timing']).to.equal(undefined);
    expect(await overheadCount()).to.equal(before + 2);
  });

  it('loses no capture when most renderers vanish unannounced: a refused connection does not use up the retry', async () => {
    const started = await startStubs(5, 20);
    const { app } = await remoteApp(mutableEndpoints(started.map((s) => s.url)), { RENDERER_PROBE_INTERVAL_MS: '60000' });
    await Promise.all(started.slice(0, 3).map((stub) => stub.close()));
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await capture(app)).status);
    expect(statuses).to.deep.equal(Array(10).fill(200));
    expect(started[3]!.renderer.completed() + started[4]!.renderer.completed()).to.equal(10);
  });
});
