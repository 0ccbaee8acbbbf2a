/**
 * Tells the API's own time apart from the time it waits on renderers, for every request that
 * waited on one. The remote renderer adds each upstream exchange to the request's UpstreamTiming
 * (passed in CaptureOptions); this middleware, mounted first, answers with
 * `Server-Timing: renderer;dur=<waiting>, total;dur=<whole request>` (milliseconds, as the header's
 * standard wants) and hands the difference, the dispatch overhead, to a recorder (a histogram).
 * The body is written after the header, so `total` ends when the handler returns.
 */
import type { Middleware } from 'koa';

export interface UpstreamTiming {
  /** Milliseconds spent waiting on upstream services (from sending a request to the end of its answer). */
  upstreamMs: number;
  /** How many upstream exchanges were made (a retry makes two). */
  exchanges: number;
}

export function serverTiming(recordOverheadSeconds: (seconds: number) => void): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const timing: UpstreamTiming = { upstreamMs: 0, exchanges: 0 };
    ctx.state.upstreamTiming = timing;
    await next();
    if (timing.exchanges === 0) return;
    const totalMs = performance.now() - started;
    ctx.set('Server-Timing', `renderer;dur=${timing.upstreamMs.toFixed(3)}, total;dur=${totalMs.toFixed(3)}`);
    recordOverheadSeconds(Math.max(0, totalMs - timing.upstreamMs) / 1000);
  };
}
