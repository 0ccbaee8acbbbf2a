import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../logger.ts';

const REQUEST_ID = /^[\w.-]{1,64}$/;
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Gives every request an id (kept from X-Request-Id when sane) and writes one access-log line.
 * quietPaths: more paths polled often (the renderer's status), logged at debug when they succeed.
 */
export function requestContext(logger: Logger, quietPaths: readonly string[] = []): Middleware {
  const quiet = new Set([...QUIET_PATHS, ...quietPaths]);
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // Probes and scrapes arrive every few seconds from every prober: their successes are noise.
      const level = quiet.has(ctx.path) && ctx.status < 400 ? 'debug' : 'info';
      logger[level](
        { requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) },
        'Served a request',
      );
    }
  };
}
