import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { BadRequest, PayloadTooLarge, UnsupportedMediaType } from '../errors.ts';

/**
 * Accepts only `application/json` bodies (415 otherwise) up to `limitBytes` (413), and turns
 * malformed JSON into a 400 that says so.
 */
export function jsonBody(limitBytes: number): Middleware[] {
  const requireJson: Middleware = (ctx, next) => {
    if (ctx.request.type !== 'application/json') {
      throw new UnsupportedMediaType(`Content-Type must be application/json${ctx.request.type ? `, got ${ctx.request.type}` : ''}`);
    }
    return next();
  };
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    multipart: false,
    urlencoded: false,
    text: false,
    patchNode: false,
    onError: (err) => {
      if ((err as { status?: number }).status === 413) throw new PayloadTooLarge(limitBytes);
      throw new BadRequest(`Malformed JSON body: ${err.message}`);
    },
  }) as Middleware;
  return [requireJson, parse];
}
