import { expect } from 'chai';
import request from 'supertest';
import { Histogram } from 'prom-client';
import { createLatencyHistogram, createRegistry, observeTraced, openMetricsText, startTracedTimer } from '../../lib/metrics.ts';
import { createApp } from '../../services/api/src/app.ts';
import { apiRegistry, instrumentStore } from '../../services/api/src/metrics.ts';
import { instrumentRenderer, outcomeOf } from '../../services/renderer/src/metrics.ts';
import { BadRequest, CaptureFailed, Forbidden, NavigationTimeout, ServiceUnavailable, TooManyRequests } from '../../lib/errors.ts';
import { resettingPort, startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { sharedRenderer, silentLogger, testConfig } from '../support/harness.ts';
import { sampleValue } from '../support/renderer-service.ts';

const API_KEY = 'vf_metrics_test_key_5b1e0c';

describe('GET /metrics of the API (in-process renderer)', () => {
  let fixtures: FixtureServer;
  let app: ReturnType<typeof createApp>;
  let rendererRegistry: ReturnType<typeof createRegistry>;

  before(async () => {
    fixtures = await startFixtureServer();
    rendererRegistry = createRegistry({ processMetrics: false });
    const renderer = instrumentRenderer(await sharedRenderer(), rendererRegistry);
    app = createApp({ config: testConfig({ API_KEY }), renderer, logger: silentLogger, rendererRegistry });
  });
  after(() => fixtures.close());

  const scrape = async () => {
    const response = await request(app.callback()).get('/metrics');
    expect(response.status).to.equal(200);
    return response;
  };
  const capture = (body: Record<string, unknown>, key = API_KEY) =>
    request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').set('X-API-Key', key).send(body);

  it("answers Prometheus's text format, every name prefixed viewfinder_, with the process metrics", async () => {
    const response = await scrape();
    expect(response.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
    const names = [...response.text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] as string);
    expect(names).to.include.members(['viewfinder_process_cpu_seconds_total', 'viewfinder_process_resident_memory_bytes', 'viewfinder_nodejs_eventloop_lag_seconds']);
    for (const name of names) expect(name).to.match(/^viewfinder_/);
  });

  it('serves the in-process capture metrics beside the API ones', async () => {
    const response = await capture({ url: fixtures.url('/simple'), quality: 'mobile' });
    expect(response.status).to.equal(200);
    const text = (await scrape()).text;
    expect(text).to.match(/^viewfinder_capture_duration_seconds_count\{profile="mobile",outcome="success"\} 1$/m);
    expect(text).to.match(/^viewfinder_capture_png_bytes_count\{profile="mobile"\} 1$/m);
    expect(text).to.match(/^viewfinder_render_capacity 2$/m);
    expect(text).to.match(/^viewfinder_render_in_flight 0$/m);
    expect(text).to.match(/^viewfinder_browser_restarts_total 0$/m);
  });

  it('labels requests with the route template and status class, never the raw path', async () => {
    const before = (await sampleValue(apiRegistry, 'viewfinder_http_request_duration_seconds_count', { route: 'unmatched', method: 'GET', status_class: '4xx' })) ?? 0;
    await request(app.callback()).get('/sites/site-4711/keys/abc');
    expect(await sampleValue(apiRegistry, 'viewfinder_http_request_duration_seconds_count', { route: 'unmatched', method: 'GET', status_class: '4xx' })).to.equal(before + 1);
    const text = (await scrape()).text;
    expect(text).to.match(/^viewfinder_http_request_duration_seconds_count\{route="\/screenshot",method="POST",status_class="2xx"\} \d+$/m);
    expect(text).to.not.include('site-4711');
  });

  it('counts authentication failures by reason, without the key', async () => {
    const reasons = { missing_key: 0, invalid_key: 0 };
    for (const reason of Object.keys(reasons) as (keyof typeof reasons)[]) {
      reasons[reason] = (await sampleValue(apiRegistry, 'viewfinder_auth_failures_total', { reason })) ?? 0;
    }
    expect((await request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url: fixtures.url('/simple') })).status).to.equal(401);
    expect((await capture({ url: fixtures.url('/simple') }, 'vf_wrong_key_9f8e7d')).status).to.equal(401);
    expect(await sampleValue(apiRegistry, 'viewfinder_auth_failures_total', { reason: 'missing_key' })).to.equal(reasons.missing_key + 1);
    expect(await sampleValue(apiRegistry, 'viewfinder_auth_failures_total', { reason: 'invalid_key' })).to.equal(reasons.invalid_key + 1);
    const text = (await scrape()).text;
    expect(text).to.not.include('vf_wrong_key_9f8e7d');
    expect(text).to.not.include(API_KEY);
  });

  it('records a failed capture with outcome error, and never the URL', async () => {
    const failing = await resettingPort();
    try {
      expect((await capture({ url: `http://127.0.0.1:${failing.port}/private/path` })).status).to.equal(500);
      expect(failing.connections(), 'the capture failed on the held port, not elsewhere').to.be.greaterThan(0);
    } finally {
      await failing.close();
    }
    expect(await sampleValue(rendererRegistry, 'viewfinder_capture_duration_seconds_count', { profile: 'standard', outcome: 'error' })).to.equal(1);
    const text = (await scrape()).text;
    expect(text).to.not.include('/private/path');
    expect(text).to.not.include(fixtures.origin);
  });

  it('registers the rate-limit and store metrics of the hosted mode in self-hosted mode too', async () => {
    const text = (await scrape()).text;
    expect(text).to.match(/^# TYPE viewfinder_rate_limited_total counter$/m);
    expect(text).to.match(/^viewfinder_rate_limited_total \d+$/m);
    expect(text).to.match(/^# TYPE viewfinder_store_operation_duration_seconds histogram$/m);
  });
});

describe('GET /metrics: Prometheus text format or OpenMetrics, by the Accept header', () => {
  let app: ReturnType<typeof createApp>;
  before(async () => {
    app = createApp({ config: testConfig({ API_KEY }), renderer: await sharedRenderer(), logger: silentLogger });
  });
  const scrape = (accept?: string) => {
    const get = request(app.callback()).get('/metrics');
    return accept === undefined ? get : get.set('Accept', accept);
  };

  it("answers Prometheus's text format without an Accept header, to */*, to text/plain and to an OpenMetrics version it does not write", async () => {
    for (const accept of [undefined, '*/*', 'text/plain', 'text/plain;version=0.0.4', 'application/openmetrics-text;version=0.0.1', 'application/json']) {
      const response = await scrape(accept);
      expect(response.status, String(accept)).to.equal(200);
      expect(response.headers['content-type'], String(accept)).to.equal('text/plain; version=0.0.4; charset=utf-8');
      expect(response.text, String(accept)).to.not.include('# EOF');
    }
  });

  it('answers OpenMetrics 1.0.0 to the Accept header of Prometheus, which prefers it, and to a bare application/openmetrics-text', async () => {
    for (const accept of ['application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1', 'application/openmetrics-text']) {
      const response = await scrape(accept);
      expect(response.headers['content-type']).to.equal('application/openmetrics-text; version=1.0.0; charset=utf-8');
      const text = String(response.text ?? response.body);
      expect(text.endsWith('\n# EOF\n')).to.equal(true);
      // A counter is a family without _total whose sample has it.
      expect(text).to.include('# TYPE viewfinder_auth_failures counter\n');
      expect(text).to.match(/^viewfinder_auth_failures_total\{reason="missing_key"\} \d+$/m);
    }
  });

  it('leaves the Prometheus text format as it was after an OpenMetrics scrape: counters keep their _total names', async () => {
    const before = (await scrape()).text;
    await scrape('application/openmetrics-text');
    const after = (await scrape()).text;
    expect(after).to.include('# TYPE viewfinder_auth_failures_total counter\n');
    const counters = (text: string) => [...text.matchAll(/^# TYPE (\S+) counter$/gm)].map((match) => match[1]);
    expect(counters(after)).to.deep.equal(counters(before));
    for (const name of counters(after)) expect(name).to.match(/_total$/);
  });
});

describe('latency histograms with exemplars (createLatencyHistogram), tracing off', () => {
  const config = { name: 'viewfinder_test_latency_seconds', help: 'A latency.', labelNames: ['route'] as const, buckets: [0.1, 0.5, 1] };
  const observations: [string, number][] = [['/a', 0.05], ['/a', 0.7], ['/b', 3], ['/a', 0.3]];

  it("prints, in Prometheus's text format, byte for byte what a plain prom-client histogram prints for the same observations", async () => {
    const plainRegistry = createRegistry({ processMetrics: false });
    const plain = new Histogram({ ...config, registers: [plainRegistry] });
    const tracedRegistry = createRegistry({ processMetrics: false });
    const traced = createLatencyHistogram(config, tracedRegistry);
    for (const [route, seconds] of observations) {
      plain.observe({ route }, seconds);
      observeTraced(traced, { route }, seconds);
    }
    const stopPlain = plain.startTimer({ route: '/c' });
    const stopTraced = startTracedTimer(traced, { route: '/c' });
    plain.observe({ route: '/c' }, 0.25);
    observeTraced(traced, { route: '/c' }, 0.25);
    stopPlain();
    stopTraced();
    // The timers measured different durations: compare everything but the /c series' sum.
    const withoutTimedSum = (text: string) => text.replace(/^viewfinder_test_latency_seconds_sum\{route="\/c"\} .*$/m, '');
    const plainText = await plainRegistry.metrics();
    expect(withoutTimedSum(await tracedRegistry.metrics())).to.equal(withoutTimedSum(plainText));
    expect(plainText).to.match(/^viewfinder_test_latency_seconds_bucket\{le="0.5",route="\/a"\} 2$/m);
  });

  it('keeps no exemplar when no span records: its OpenMetrics has none either', async () => {
    const registry = createRegistry({ processMetrics: false });
    const traced = createLatencyHistogram(config, registry);
    for (const [route, seconds] of observations) observeTraced(traced, { route }, seconds);
    const text = await openMetricsText(registry);
    expect(text).to.match(/^viewfinder_test_latency_seconds_bucket\{le="1",route="\/a"\} 3$/m);
    expect(text).to.not.include('#{').and.not.include(' # {');
  });
});

describe('capture outcomes', () => {
  const cases = [
    ['timeout', new NavigationTimeout()],
    ['rejected', new TooManyRequests('Too many captures', 1)],
    ['rejected', new Forbidden('Blocked address')],
    ['rejected', new BadRequest('Bad')],
    ['rejected', new ServiceUnavailable('Shutting down')],
    ['error', new CaptureFailed()],
    ['error', new Error('a bug')],
  ] as const;
  for (const [outcome, err] of cases) {
    it(`classifies ${err.constructor.name}${'status' in err ? ` (${err.status})` : ''} as ${outcome}`, () => {
      expect(outcomeOf(err, undefined)).to.equal(outcome);
    });
  }

  it('classifies any failure after the caller aborted as cancelled', () => {
    const controller = new AbortController();
    controller.abort();
    expect(outcomeOf(new CaptureFailed(), controller.signal)).to.equal('cancelled');
  });
});

describe('store latency (instrumentStore)', () => {
  /** A minimal store with the shape of lib/store's: every method async. */
  class MemoryStore {
    readonly sites = new Map<string, string>();
    async getSite(id: string): Promise<string | null> {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return this.sites.get(id) ?? null;
    }
    async deleteSite(id: string): Promise<boolean> {
      if (id === 'locked') throw new Error('locked');
      return this.sites.delete(id);
    }
    async close(): Promise<void> {}
  }

  it('times every method by name and backend, passing arguments and results through', async () => {
    const store = new MemoryStore();
    store.sites.set('s1', 'site one');
    const timed = instrumentStore(store, 'sqlite');
    const before = (await sampleValue(apiRegistry, 'viewfinder_store_operation_duration_seconds_count', { operation: 'getSite', backend: 'sqlite' })) ?? 0;
    expect(await timed.getSite('s1')).to.equal('site one');
    expect(await timed.getSite('nope')).to.equal(null);
    expect(await sampleValue(apiRegistry, 'viewfinder_store_operation_duration_seconds_count', { operation: 'getSite', backend: 'sqlite' })).to.equal(before + 2);
    expect(await sampleValue(apiRegistry, 'viewfinder_store_operation_duration_seconds_sum', { operation: 'getSite', backend: 'sqlite' })).to.be.greaterThan(0);
  });

  it('times a failed operation too, and rethrows its error', async () => {
    const timed = instrumentStore(new MemoryStore(), 'mongodb');
    const before = (await sampleValue(apiRegistry, 'viewfinder_store_operation_duration_seconds_count', { operation: 'deleteSite', backend: 'mongodb' })) ?? 0;
    let thrown: unknown;
    await timed.deleteSite('locked').catch((err: unknown) => (thrown = err));
    expect((thrown as Error).message).to.equal('locked');
    expect(await sampleValue(apiRegistry, 'viewfinder_store_operation_duration_seconds_count', { operation: 'deleteSite', backend: 'mongodb' })).to.equal(before + 1);
  });
});
