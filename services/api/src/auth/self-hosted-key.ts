import type { IncomingHttpHeaders } from 'node:http';
import type { Middleware } from 'koa';
import { secretMatches } from '../../../../lib/constant-time.ts';
import { Unauthorized } from '../../../../lib/errors.ts';
import { recordAuthFailure } from '../metrics.ts';

/**
 * Self-hosted authentication (SPEC 5.1): when API_KEY is set, every capture carries it as
 * `X-API-Key` or `Authorization: Bearer`, compared in constant time.
 */
export function requireSelfHostedKey(apiKey: string | undefined): Middleware {
  if (apiKey === undefined) return (_ctx, next) => next();
  return async (ctx, next) => {
    const presented = presentedKey(ctx.headers);
    if (presented === undefined || !secretMatches(presented, apiKey)) {
      recordAuthFailure(presented === undefined ? 'missing_key' : 'invalid_key');
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
