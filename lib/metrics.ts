/**
 * Prometheus helpers shared by the API and the renderer service. Each service owns one dedicated
 * prom-client Registry (never the global one); every name starts with `viewfinder_`, durations are
 * in seconds, and labels are bounded: a route template, never a raw URL, site id or key.
 */
import type { Middleware } from 'koa';
import { collectDefaultMetrics, Histogram, Registry, type HistogramConfiguration, type LabelValues, type Metric, type OpenMetricsContentType } from 'prom-client';
import { traceExemplar } from './tracing.ts';

export const METRIC_PREFIX = 'viewfinder_';

/** A registry with, unless told otherwise, prom-client's process metrics (viewfinder_process_*, viewfinder_nodejs_*). */
export function createRegistry({ processMetrics = true }: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  return registry;
}

const HTTP_REQUEST_DURATION = 'viewfinder_http_request_duration_seconds';
export const HTTP_LABELS = ['route', 'method', 'status_class'] as const;
export type HttpLabel = (typeof HTTP_LABELS)[number];

/** The route label of a request no route matched (404s); the raw path would be unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The request histogram of `registry`, created on first use, so that two apps may share one registry. */
export function createHttpRequestDuration(registry: Registry): Histogram<HttpLabel> {
  const existing = registry.getSingleMetric(HTTP_REQUEST_DURATION);
  if (existing) return existing as Histogram<HttpLabel>;
  return createLatencyHistogram(
    {
      name: HTTP_REQUEST_DURATION,
      help: 'Time from receiving a request to sending its response, by route template, method and status class.',
      labelNames: HTTP_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    },
    registry,
  );
}

/**
 * A latency histogram whose observations (observeTraced, startTracedTimer) keep, per bucket, the
 * trace id of the last traced one as an exemplar, which only an OpenMetrics scrape shows
 * (metricsEndpoint; docs/operations.md, "Exemplars"). prom-client refuses `enableExemplars` on a
 * registry of Prometheus's text format, which prints no exemplar anyway: the histogram is built
 * outside any registry, then registered in `registry`.
 */
export function createLatencyHistogram<L extends string>(config: Omit<HistogramConfiguration<L>, 'registers' | 'enableExemplars'>, registry: Registry): Histogram<L> {
  const histogram = new Histogram<L>({ ...config, registers: [], enableExemplars: true });
  registry.registerMetric(histogram);
  return histogram;
}

/** Observes `seconds` in a createLatencyHistogram one, with the active trace's id when a span records. */
export function observeTraced<L extends string>(histogram: Histogram<L>, labels: LabelValues<L>, seconds: number): void {
  histogram.observe({ labels, value: seconds, exemplarLabels: traceExemplar() as LabelValues<L> });
}

/** histogram.startTimer, for a createLatencyHistogram one: the exemplar is the trace active when the timer stops. */
export function startTracedTimer<L extends string>(histogram: Histogram<L>, labels?: LabelValues<L>): (endLabels?: LabelValues<L>) => number {
  // With enableExemplars, prom-client's stop function takes the exemplar's labels second.
  const stop = histogram.startTimer(labels) as (endLabels?: LabelValues<L>, exemplarLabels?: LabelValues<L>) => number;
  return (endLabels) => stop(endLabels, traceExemplar() as LabelValues<L>);
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Times every request. Mount it outside the error translator, so that it sees the final status,
 * and outside the router, whose matched path template (`ctx._matchedRoute`) becomes the route label.
 */
export function httpMetrics(histogram: Histogram<HttpLabel>): Middleware {
  return async (ctx, next) => {
    const stopTimer = startTracedTimer(histogram);
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      stopTimer({
        route: typeof matched === 'string' ? matched : UNMATCHED_ROUTE,
        method: KNOWN_METHODS.has(ctx.method) ? ctx.method : 'OTHER',
        status_class: `${Math.floor(ctx.status / 100)}xx`,
      });
    }
  };
}

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4';
const OPENMETRICS_TEXT = 'application/openmetrics-text; version=1.0.0';

/**
 * GET /metrics: Prometheus's text format, unless the Accept header prefers OpenMetrics 1.0.0 (as
 * Prometheus's own scrapes do), which also shows the latency histograms' exemplars. A scraper that
 * asks for neither (no Accept, `*` / `*`, another version) gets Prometheus's text format.
 */
export function metricsEndpoint(registry: Registry): Middleware {
  return async (ctx) => {
    const openMetrics = ctx.accepts(PROMETHEUS_TEXT, OPENMETRICS_TEXT) === OPENMETRICS_TEXT;
    const body = openMetrics ? await openMetricsText(registry) : await registry.metrics();
    ctx.set('Content-Type', openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : registry.contentType);
    ctx.body = body;
  };
}

/**
 * The metrics of `registry` (one of Prometheus's text format) in OpenMetrics, exemplars included.
 * prom-client writes OpenMetrics only from a registry of that type, and while it does, renames a
 * counter in place to its family name (`x_total` becomes `x`), which the Prometheus text format would
 * then print: so a counter enters a fresh OpenMetrics registry as a view answering its family name,
 * and the metrics the text format prints are never changed.
 */
export async function openMetricsText(registry: Registry): Promise<string> {
  const view = new Registry<OpenMetricsContentType>();
  view.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  for (const metric of registry.getMetricsAsArray() as unknown as CountedMetric[]) {
    view.registerMetric((metric.type === 'counter' ? counterFamily(metric) : metric) as unknown as Metric);
  }
  return view.metrics();
}

/** What prom-client's Registry reads of a metric when it writes it. */
interface CountedMetric {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  get(): Promise<{ name: string }>;
}

function counterFamily(counter: CountedMetric): CountedMetric {
  const family = counter.name.replace(/_total$/, '');
  return {
    name: family,
    help: counter.help,
    type: counter.type,
    aggregator: counter.aggregator,
    get: async () => ({ ...(await counter.get()), name: family }),
  };
}

/**
 * A counter whose total lives elsewhere (e.g. a pool's restart count): at each scrape it advances by
 * what the source gained since the last one. A source that went backwards (a new pool) counts from 0.
 */
export function followTotal(read: () => number): (inc: (by: number) => void) => void {
  let last = 0;
  return (inc) => {
    const now = read();
    const gained = now >= last ? now - last : now;
    last = now;
    if (gained > 0) inc(gained);
  };
}
