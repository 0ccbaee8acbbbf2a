/**
 * One server span per request (lib/tracing.ts; docs/operations.md, "Tracing"), continuing the trace of
 * an incoming W3C `traceparent`: named `METHOD route` (the route's template, never its values), with
 * the semantic conventions' http.request.method, http.route, url.path, url.scheme and
 * http.response.status_code, and error.type for a 5xx. No header, query string or body is recorded.
 * Mounted first, so that the access log line and everything the request does is written in the span.
 * Probes and scrapes are not traced. Off, it is one check and `next()`.
 */
import type { Middleware } from 'koa';
import { inSpan, tracingOn, type SpanAttributes } from '../tracing.ts';

const UNTRACED_PATHS = ['/healthz', '/readyz', '/metrics'];

/** `attributes`: the same on every span of this app (viewfinder.mode); `untracedPaths`: more polled paths. */
export function traceRequests(attributes: SpanAttributes = {}, untracedPaths: readonly string[] = []): Middleware {
  const untraced = new Set([...UNTRACED_PATHS, ...untracedPaths]);
  return (ctx, next) => {
    if (!tracingOn() || untraced.has(ctx.path)) return next();
    const start = { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol, ...attributes };
    return inSpan(
      ctx.method,
      start,
      async (span) => {
        try {
          await next();
        } finally {
          const route = (ctx as { _matchedRoute?: string })._matchedRoute;
          if (route) span.updateName(`${ctx.method} ${route}`);
          span.setAttributes({ 'http.route': route, 'http.response.status_code': ctx.status });
          if (ctx.status >= 500) span.fail(String(ctx.status));
        }
      },
      { kind: 'server', parent: ctx.get('traceparent') || undefined },
    );
  };
}
