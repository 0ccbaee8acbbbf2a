import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { secretMatches } from '../../../../lib/constant-time.ts';
import { Forbidden, PayloadTooLarge, UnsupportedMediaType } from '../../../../lib/errors.ts';

/**
 * Form posts: only application/x-www-form-urlencoded (what an HTML form sends), within the
 * API's body limit, into a flat record of strings.
 */
export function formBody(limitBytes: number): Middleware[] {
  const requireForm: Middleware = (ctx, next) => {
    if (ctx.request.type !== 'application/x-www-form-urlencoded') {
      throw new UnsupportedMediaType(`Content-Type must be application/x-www-form-urlencoded${ctx.request.type ? `, got ${ctx.request.type}` : ''}`);
    }
    return next();
  };
  const parse = koaBody({
    urlencoded: true,
    json: false,
    text: false,
    multipart: false,
    formLimit: limitBytes,
    patchNode: false,
    onError: (err) => {
      if ((err as { status?: number }).status === 413) throw new PayloadTooLarge(limitBytes);
      throw err;
    },
  }) as Middleware;
  return [requireForm, parse];
}

/** A form field as one string: a repeated field keeps its last value, a missing one is ''. */
export function field(ctx: Context, name: string): string {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  const last = Array.isArray(value) ? value.at(-1) : value;
  return typeof last === 'string' ? last : '';
}

/** Refuses a state-changing request whose form does not carry the expected CSRF token. */
export function checkCsrf(ctx: Context, expected: string): void {
  const presented = field(ctx, '_csrf');
  if (!presented || !secretMatches(presented, expected)) {
    throw new Forbidden('Invalid or missing CSRF token: reload the page and submit the form again');
  }
}
