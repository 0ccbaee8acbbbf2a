/**
 * Prometheus helpers shared by the API and the renderer service. Each service owns one dedicated
 * prom-client Registry (never the global one); every name starts with `viewfinder_`, durations are
 * in seconds, and labels are bounded: a route template, never a raw URL, site id or key.
 */
import type { Middleware } from 'koa';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

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
  return new Histogram({
    name: HTTP_REQUEST_DURATION,
    help: 'Time from receiving a request to sending its response, by route template, method and status class.',
    labelNames: HTTP_LABELS,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers: [registry],
  });
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Times every request. Mount it outside the error translator, so that it sees the final status,
 * and outside the router, whose matched path template (`ctx._matchedRoute`) becomes the route label.
 */
export function httpMetrics(histogram: Histogram<HttpLabel>): Middleware {
  return async (ctx, next) => {
    const stopTimer = histogram.startTimer();
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

/** GET /metrics in Prometheus's text format. */
export function metricsEndpoint(registry: Registry): Middleware {
  return async (ctx) => {
    const body = await registry.metrics();
    ctx.set('Content-Type', registry.contentType);
    ctx.body = body;
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
