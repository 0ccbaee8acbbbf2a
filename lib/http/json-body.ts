import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { BadRequest, PayloadTooLarge, UnsupportedMediaType } from '../errors.ts';

/** Deepest nesting of objects and arrays a body may have; no request of ours needs more than 2. */
export const MAX_JSON_DEPTH = 32;

/**
 * Accepts only `application/json` bodies (415 otherwise) up to `limitBytes` (413), turns
 * malformed JSON into a 400 that says so, and refuses bodies nested deeper than MAX_JSON_DEPTH
 * (400) before any validator walks them.
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
  const limitDepth: Middleware = (ctx, next) => {
    if (depthOf(ctx.request.body) > MAX_JSON_DEPTH) {
      throw new BadRequest(`Malformed JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    return next();
  };
  return [requireJson, parse, limitDepth];
}

/** Nesting depth of a parsed JSON value, without recursion, so that no body can exhaust the stack. */
export function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}
