import type { Middleware } from 'koa';
import { ServiceUnavailable } from '../../../../lib/errors.ts';

/** GET /healthz: the process is alive and serving. */
export const healthz: Middleware = (ctx) => {
  ctx.body = { status: 'ok' };
};

/** GET /readyz: the service can take requests now (its in-process browser pool is warm), and is not shutting down. */
export function readyz(isReady: () => boolean): Middleware {
  return (ctx) => {
    if (!isReady()) throw new ServiceUnavailable('Not ready: the browser pool is starting or the service is shutting down');
    ctx.body = { status: 'ready' };
  };
}
