import { expect } from 'chai';
import { expectEventually } from '../support/eventually.ts';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { otelEnv, skipWithoutJaeger, parentOf, spanTree, tracesOf, uniqueServiceName, type JaegerTrace } from '../support/jaeger.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';
import { scrapeEverySecond, startPrometheus, type PrometheusProcess } from '../support/prometheus.ts';

const API_JOB = 'viewfinder-api';
const RENDERER_JOB = 'viewfinder-renderer';
const UNTRACED_JOB = 'viewfinder-api-untraced';
/** The Accept header Prometheus 2.x scrapes with. */
const PROMETHEUS_ACCEPT = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

/**
 * Exemplars end to end (docs/operations.md, "Exemplars"): a traced API and a traced renderer service
 * as processes, a real Prometheus storing exemplars (--enable-feature=exemplar-storage) scraping
 * them as OpenMetrics, and the real Jaeger (test/cluster/jaeger.sh) the spans go to. A capture's
 * latency buckets carry, in Prometheus, the trace id of the trace Jaeger holds for that capture; an
 * API without tracing gives Prometheus no exemplar at all.
 */
describe('exemplars: the latency histograms lead to the capture\'s trace (real Prometheus with exemplar storage, real Jaeger)', function () {
  this.timeout(300_000);
  let fixtures: FixtureServer;
  let renderer: ServiceProcess | undefined;
  let api: ServiceProcess | undefined;
  let untraced: ServiceProcess | undefined;
  let prometheus: PrometheusProcess | undefined;
  let trace: JaegerTrace;
  const services = { api: uniqueServiceName('vf-exemplar-api'), renderer: uniqueServiceName('vf-exemplar-renderer') };

  skipWithoutJaeger();
  before(async function () {
    fixtures = await startFixtureServer();
    renderer = await startServiceProcess(RENDERER_MAIN, { ...otelEnv(services.renderer), RENDER_CONCURRENCY: '1' });
    [api, untraced] = await Promise.all([
      startServiceProcess(API_MAIN, { ...otelEnv(services.api), RENDERER_URL: renderer.base, RENDERER_PROBE_INTERVAL_MS: '500' }),
      startServiceProcess(API_MAIN, { RENDERER_URL: renderer.base, RENDERER_PROBE_INTERVAL_MS: '500' }),
    ]);
    prometheus = await startPrometheus(
      scrapeEverySecond({ [API_JOB]: [`127.0.0.1:${api.port}`], [RENDERER_JOB]: [`127.0.0.1:${renderer.port}`], [UNTRACED_JOB]: [`127.0.0.1:${untraced.port}`] }),
      ['exemplar-storage'],
    );
    await prometheus.eventually('up == 1', (samples) => samples.length === 3);

    // The untraced API first: its capture reaches the same (traced) renderer, which then makes a trace
    // of its own, and a histogram bucket keeps only its latest exemplar. Last, it could replace the
    // traced capture's exemplar before Prometheus scraped it (under load both land in one bucket).
    for (const service of [untraced, api]) {
      const response = await fetch(`${service.base}/screenshot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: fixtures.url('/simple') }) });
      await response.arrayBuffer();
      expect(response.status).to.equal(200);
    }
    await expectEventually(async () => {
      const traces = (await tracesOf(services.api)).filter((candidate) => candidate.spans.some((span) => span.operationName === 'POST /screenshot' && !parentOf(candidate, span)));
      expect(traces).to.have.length(1);
      trace = traces[0]!;
      expect(trace.spans.map((span) => trace.processes[span.processID]?.serviceName)).to.include(services.renderer);
    }, 60_000);
  });
  after(async () => {
    await prometheus?.close();
    await Promise.all([api?.stop(), untraced?.stop(), renderer?.stop()]);
    await fixtures?.close();
  });

  /** The trace ids of the exemplars Prometheus stored for `promql`. */
  const exemplarTraceIds = async (promql: string) => (await prometheus!.exemplars(promql)).flatMap((series) => series.exemplars.map((exemplar) => exemplar.labels.trace_id));

  it("stores, on the renderer's capture latency and on the API's request latency, an exemplar with the trace id of the capture's trace in Jaeger", async () => {
    await expectEventually(async () => {
      expect(await exemplarTraceIds(`viewfinder_capture_duration_seconds_bucket{job="${RENDERER_JOB}",outcome="success"}`)).to.include(trace.traceID);
      expect(await exemplarTraceIds(`viewfinder_http_request_duration_seconds_bucket{job="${API_JOB}",route="/screenshot"}`)).to.include(trace.traceID);
    }, 60_000);
    // The trace the exemplar names spans both processes: the API's request and the renderer's capture.
    const names = trace.spans.map((span) => `${span.operationName} [${trace.processes[span.processID]?.serviceName}]`);
    expect(names, spanTree(trace)).to.include.members([`POST /screenshot [${services.api}]`, `POST /v1/captures [${services.renderer}]`, `renderer.capture [${services.renderer}]`]);
  });

  it('shows exemplars only to an OpenMetrics scrape: the Prometheus text format of a traced process has none', async () => {
    const text = await fetch(`${api!.base}/metrics`);
    expect(text.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    const body = await text.text();
    expect(body).to.match(/^viewfinder_http_request_duration_seconds_count\{route="\/screenshot",method="POST",status_class="2xx"\} 1$/m);
    expect(body).to.not.include('trace_id');
    expect(body).to.not.include(' # {');

    const openMetrics = await fetch(`${api!.base}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
    expect(openMetrics.headers.get('content-type')).to.match(/^application\/openmetrics-text; version=1\.0\.0/);
    expect(await openMetrics.text()).to.match(new RegExp(`^viewfinder_http_request_duration_seconds_bucket\\{le="[^"]+",route="/screenshot",method="POST",status_class="2xx"\\} 1 # \\{trace_id="${trace.traceID}"\\} [0-9.e-]+ [0-9.]+$`, 'm'));
  });

  it('gives Prometheus no exemplar from an API without tracing, though it scrapes OpenMetrics and the capture counted', async () => {
    const samples = await prometheus!.eventually(`viewfinder_http_request_duration_seconds_count{job="${UNTRACED_JOB}",route="/screenshot",status_class="2xx"}`, (found) => found[0]?.value[1] === '1');
    expect(samples).to.have.length(1);
    const openMetrics = await (await fetch(`${untraced!.base}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } })).text();
    expect(openMetrics).to.match(/^viewfinder_http_request_duration_seconds_count\{route="\/screenshot",method="POST",status_class="2xx"\} 1$/m);
    expect(openMetrics).to.not.include(' # {');
    expect(await exemplarTraceIds(`{job="${UNTRACED_JOB}"}`)).to.deep.equal([]);
  });
});
