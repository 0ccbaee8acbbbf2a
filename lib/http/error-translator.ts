import type { Middleware } from 'koa';
import { HttpError, PayloadTooLarge } from '../errors.ts';
import type { Logger } from '../logger.ts';

/**
 * The one place errors become responses. Typed HttpErrors keep their status and message; anything
 * else is a generic 500 whose details go to the log only.
 */
export function errorTranslator(logger: Logger, bodyLimitBytes: number): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const httpError = toHttpError(err, bodyLimitBytes);
      if (httpError.status >= 500 && !(err instanceof HttpError)) {
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
  // Koa itself and its middleware raise http-errors carrying a status; keep the status they meant.
  const status = (err as { status?: unknown })?.status;
  if (status === 413) return new PayloadTooLarge(bodyLimitBytes);
  if (typeof status === 'number' && status >= 400 && status < 500 && (err as { expose?: boolean }).expose) {
    return new HttpError(status, (err as Error).message);
  }
  return new HttpError(500, 'Internal server error');
}
