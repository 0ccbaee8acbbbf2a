import type { Middleware } from 'koa';
import { HttpError, PayloadTooLarge, ServiceUnavailable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../store/unavailable.ts';

/**
 * The one place errors become responses. Typed HttpErrors keep their status and message; a store
 * that cannot be reached is a 503 with Retry-After (lib/store/unavailable.ts), logged as a warning
 * without its stack (every request says it while the outage lasts); anything else is a generic 500
 * whose details go to the log only.
 */
export function errorTranslator(logger: Logger, bodyLimitBytes: number): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const httpError = toHttpError(err, bodyLimitBytes);
      if (isStoreUnavailable(err)) {
        logger.warn({ requestId: ctx.state.requestId, error: `${(err as Error).name}: ${(err as Error).message}` }, 'The store is unreachable: answered 503');
      } else if (httpError.status >= 500 && !(err instanceof HttpError)) {
        logger.error({ err, requestId: ctx.state.requestId }, 'Request failed unexpectedly');
      }
      ctx.status = httpError.status;
      ctx.set(httpError.headers);
      ctx.body = httpError.toBody();
    }
  };
}

function toHttpError(err: unknown, bodyLimitBytes: number): HttpError {
  if (err instanceof HttpError) return err;
  if (isStoreUnavailable(err)) return new ServiceUnavailable('The store is unreachable; try again shortly', STORE_RETRY_AFTER_SECONDS);
  // Koa itself and its middleware raise http-errors carrying a status; keep the status they meant.
  const status = (err as { status?: unknown })?.status;
  if (status === 413) return new PayloadTooLarge(bodyLimitBytes);
  if (typeof status === 'number' && status >= 400 && status < 500 && (err as { expose?: boolean }).expose) {
    return new HttpError(status, (err as Error).message);
  }
  return new HttpError(500, 'Internal server error');
}
