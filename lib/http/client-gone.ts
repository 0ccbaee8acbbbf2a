import type { Context } from 'koa';
import { BadRequest } from '../errors.ts';

/**
 * A signal that aborts when the client closes the connection before the response is written, so
 * that a capture nobody waits for stops holding a browser slot. Call `dispose` once answered.
 */
export function abortWhenClientGoes(ctx: Context): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) controller.abort(new BadRequest('client closed the request'));
  };
  ctx.res.once('close', onClose);
  return { signal: controller.signal, dispose: () => ctx.res.off('close', onClose) };
}
