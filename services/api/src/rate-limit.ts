import type { Context } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { TooManyRequests } from '../../../lib/errors.ts';
import { recordRateLimited } from './metrics.ts';

/**
 * Hosted captures per key per minute. The limit is the account's own when it has one, else the
 * service default (RATE_LIMIT_PER_MINUTE). Counters live in this process's memory: with one API
 * replica that is exact; with several, each replica allows the limit on its own.
 *
 * Every answer carries the IETF draft's RateLimit-Limit / -Remaining / -Reset headers (and a
 * RateLimit-Policy naming the window); a refused request is a 429 with Retry-After.
 */
const WINDOW_SECONDS = 60;

export interface RateLimiter {
  /** Takes one request from the key's budget, or throws TooManyRequests. Sets the headers either way. */
  consume(ctx: Context, keyId: string, accountLimit: number | null): Promise<void>;
}

export function createRateLimiter(defaultPerMinute: number): RateLimiter {
  // rate-limiter-flexible fixes `points` per limiter, so there is one limiter per distinct limit.
  const limiters = new Map<number, RateLimiterMemory>();
  const limiterFor = (points: number) => {
    let limiter = limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: `per-minute-${points}` });
      limiters.set(points, limiter);
    }
    return limiter;
  };

  return {
    async consume(ctx, keyId, accountLimit) {
      const limit = accountLimit ?? defaultPerMinute;
      let state: RateLimiterRes;
      let refused = false;
      try {
        state = await limiterFor(limit).consume(keyId);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        state = err;
        refused = true;
      }
      const resetSeconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
      const headers = {
        'RateLimit-Policy': `${limit};w=${WINDOW_SECONDS}`,
        'RateLimit-Limit': String(limit),
        'RateLimit-Remaining': String(Math.max(0, state.remainingPoints)),
        'RateLimit-Reset': String(resetSeconds),
      };
      if (refused) {
        recordRateLimited();
        throw new TooManyRequests(`Rate limit exceeded: ${limit} captures per minute for this API key; retry in ${resetSeconds} s`, resetSeconds, headers);
      }
      ctx.set(headers);
    },
  };
}
