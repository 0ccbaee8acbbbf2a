import { expect } from 'chai';
import { closedPort, startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';
import { scrapeEverySecond, startPrometheus, type PrometheusProcess, type PrometheusSample as Sample } from '../support/prometheus.ts';

const API_JOB = 'viewfinder-api';
const RENDERER_JOB = 'viewfinder-renderer';

/**
 * The API and the renderer service run as their own processes, a real Prometheus scrapes both
 * every second, and the test reads what Prometheus stored through its HTTP API.
 */
describe('a real Prometheus scraping the API and the renderer service', function () {
  this.timeout(180_000);
  let fixtures: FixtureServer;
  let renderer: ServiceProcess;
  let api: ServiceProcess;
  let prometheus: PrometheusProcess;
  const query = (promql: string) => prometheus.query(promql);
  const eventually = (promql: string, accept: (samples: Sample[]) => boolean) => prometheus.eventually(promql, accept);
  const value = (samples: Sample[]) => Number(samples[0]?.value[1]);

  before(async () => {
    fixtures = await startFixtureServer();
    renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '1' });
    api = await startServiceProcess(API_MAIN, { RENDERER_URL: renderer.base, RENDERER_PROBE_INTERVAL_MS: '500' });
    prometheus = await startPrometheus(scrapeEverySecond({ [API_JOB]: [`127.0.0.1:${api.port}`], [RENDERER_JOB]: [`127.0.0.1:${renderer.port}`] }));

    // Both targets scraped once before any capture, so that rate() sees the counters rise.
    await eventually(`up{job=~"${API_JOB}|${RENDERER_JOB}"} == 1`, (samples) => samples.length === 2);
    const capture = async (body: Record<string, unknown>) => {
      const response = await fetch(`${api.base}/screenshot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await response.arrayBuffer();
      return response.status;
    };
    for (const quality of ['standard', 'standard', 'standard', 'mobile']) {
      expect(await capture({ url: fixtures.url('/simple'), quality })).to.equal(200);
    }
    expect(await capture({ url: `http://127.0.0.1:${await closedPort()}/` })).to.equal(500);
  });

  after(async () => {
    await prometheus?.close();
    await Promise.all([api?.stop(), renderer?.stop()]);
    await fixtures?.close();
  });

  it('scrapes both services: up is 1 for the API and the renderer', async () => {
    const samples = await query(`up{job=~"${API_JOB}|${RENDERER_JOB}"}`);
    expect(samples.map((s) => [s.metric.job, s.value[1]]).sort()).to.deep.equal([
      [API_JOB, '1'],
      [RENDERER_JOB, '1'],
    ]);
  });

  it('sees a capture rate above 0 in the renderer, by profile and outcome', async () => {
    const rate = await eventually(
      `sum(rate(viewfinder_capture_duration_seconds_count{job="${RENDERER_JOB}",outcome="success"}[1m]))`,
      (samples) => value(samples) > 0,
    );
    expect(value(rate)).to.be.greaterThan(0);
    const counts = await eventually(`viewfinder_capture_duration_seconds_count{job="${RENDERER_JOB}"} > 0`, (samples) => samples.length === 3);
    const byLabels = Object.fromEntries(counts.map((s) => [`${s.metric.profile}/${s.metric.outcome}`, s.value[1]]));
    expect(byLabels).to.deep.equal({ 'standard/success': '3', 'mobile/success': '1', 'standard/error': '1' });
  });

  it('stores populated histogram buckets, from which a finite p95 follows', async () => {
    const selector = `job="${RENDERER_JOB}",profile="standard",outcome="success"`;
    const buckets = await eventually(`viewfinder_capture_duration_seconds_bucket{${selector}}`, (samples) => samples.some((s) => s.metric.le === '+Inf' && s.value[1] === '3'));
    const finite = buckets.filter((s) => s.metric.le !== '+Inf').map((s) => ({ le: Number(s.metric.le), count: Number(s.value[1]) }));
    expect(finite.length).to.be.greaterThan(5);
    // Cumulative buckets: never decreasing with le, and the widest finite one holds all 3 captures.
    finite.sort((a, b) => a.le - b.le);
    for (let i = 1; i < finite.length; i++) expect(finite[i]!.count).to.be.at.least(finite[i - 1]!.count);
    expect(finite.at(-1)!.count).to.equal(3);
    const p95 = value(await query(`histogram_quantile(0.95, sum by (le) (rate(viewfinder_capture_duration_seconds_bucket{${selector}}[1m])))`));
    expect(p95).to.be.greaterThan(0).and.lessThan(finite.at(-1)!.le);
    const pngBytes = await query(`viewfinder_capture_png_bytes_count{job="${RENDERER_JOB}",profile="standard"}`);
    expect(value(pngBytes)).to.equal(3);
  });

  it("records the API's requests by route template and status class", async () => {
    const requests = await eventually(
      `viewfinder_http_request_duration_seconds_count{job="${API_JOB}",route="/screenshot",method="POST"}`,
      (samples) => samples.length === 2,
    );
    const byClass = Object.fromEntries(requests.map((s) => [s.metric.status_class, s.value[1]]));
    expect(byClass).to.deep.equal({ '2xx': '4', '5xx': '1' });
    const rendererRequests = await eventually(
      `viewfinder_http_request_duration_seconds_count{job="${RENDERER_JOB}",route="/v1/captures",status_class="2xx"}`,
      (samples) => value(samples) === 4,
    );
    expect(value(rendererRequests)).to.equal(4);
  });

  it("reads the pool's gauges, and the API's view of its renderers", async () => {
    expect(value(await query(`viewfinder_render_capacity{job="${RENDERER_JOB}"}`))).to.equal(1);
    expect(value(await query(`viewfinder_render_in_flight{job="${RENDERER_JOB}"}`))).to.equal(0);
    expect(value(await query(`viewfinder_render_queue_depth{job="${RENDERER_JOB}"}`))).to.equal(0);
    expect(value(await query(`viewfinder_browser_crashes_total{job="${RENDERER_JOB}"}`))).to.equal(0);
    expect(value(await query(`viewfinder_renderers_ready{job="${API_JOB}"}`))).to.equal(1);
    expect(value(await query(`viewfinder_renderers_configured{job="${API_JOB}"}`))).to.equal(1);
  });

  it('has the prefixed process metrics of both services', async () => {
    const memory = await query('viewfinder_process_resident_memory_bytes > 0');
    expect(memory.map((s) => s.metric.job).sort()).to.deep.equal([API_JOB, RENDERER_JOB]);
  });

  it('stores no URL in any label of any viewfinder series', async () => {
    const series = await query('{__name__=~"viewfinder_.+"}');
    expect(series.length).to.be.greaterThan(100);
    for (const sample of series) {
      for (const [label, labelValue] of Object.entries(sample.metric)) {
        if (label === 'instance') continue; // Prometheus's own host:port of the target
        expect(labelValue, `${sample.metric.__name__}{${label}}`).to.not.match(/https?:|127\.0\.0\.1|\/simple/);
      }
    }
  });

  it('loads the alerting rules and evaluates them without error, none firing on a healthy system', async () => {
    let groups: { rules: { name: string; health: string; lastError?: string; state?: string; type: string }[] }[] = [];
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = (await (await fetch(`${prometheus.base}/api/v1/rules`)).json()) as { data: { groups: typeof groups } };
      groups = response.data.groups;
      if (groups.flatMap((g) => g.rules).every((rule) => rule.health === 'ok')) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const rules = groups.flatMap((g) => g.rules);
    expect(rules.filter((r) => r.type === 'alerting').map((r) => r.name)).to.include.members([
      'ViewfinderHighErrorRatio',
      'ViewfinderRenderQueueSaturated',
      'ViewfinderCaptureLatencyHigh',
      'ViewfinderRendererDown',
    ]);
    for (const rule of rules) expect(rule.health, `${rule.name}: ${rule.lastError}`).to.equal('ok');
    for (const rule of rules.filter((r) => r.type === 'alerting')) expect(rule.state, rule.name).to.equal('inactive');
  });
});
