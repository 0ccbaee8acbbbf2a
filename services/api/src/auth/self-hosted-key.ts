import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Middleware } from 'koa';
import { Unauthorized } from '../../../../lib/errors.ts';

/**
 * Self-hosted authentication (SPEC 5.1): when API_KEY is set, every capture carries it as
 * `X-API-Key` or `Authorization: Bearer`. Both sides are hashed first so that the constant-time
 * comparison does not leak the key's length either.
 */
export function requireSelfHostedKey(apiKey: string | undefined): Middleware {
  if (apiKey === undefined) return (_ctx, next) => next();
  const expected = sha256(apiKey);
  return async (ctx, next) => {
    const presented = presentedKey(ctx.headers);
    if (presented === undefined || !timingSafeEqual(sha256(presented), expected)) {
      throw new Unauthorized(presented === undefined ? 'Invalid API key: none was given' : 'Invalid API key');
    }
    await next();
  };
}

export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return bearer?.[1];
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
