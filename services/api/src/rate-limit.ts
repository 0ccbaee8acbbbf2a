import type { Context } from 'koa';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { TooManyRequests } from '../../../lib/errors.ts';
import { rateLimitCounter, type ConsumeRateLimit } from '../../../lib/store/rate-limit-counter.ts';
import { recordRateLimited } from './metrics.ts';

/**
 * Hosted captures per key per minute. The limit is the account's own when it has one, else the
 * service default (RATE_LIMIT_PER_MINUTE). The counters live in the store (store.consumeRateLimit),
 * so API replicas on one store share each key's budget: two replicas allow the limit, not twice it.
 * Only a process without a store counts in its own memory.
 *
 * Every answer carries the IETF draft's RateLimit-Limit / -Remaining / -Reset headers (and a
 * RateLimit-Policy naming the window); a refused request is a 429 with Retry-After.
 */
const WINDOW_SECONDS = 60;

export interface RateLimiter {
  /** Takes one request from the key's budget, or throws TooManyRequests. Sets the headers either way. */
  consume(ctx: Context, keyId: string, accountLimit: number | null): Promise<void>;
}

/** `consume` is the store's shared counter; without one, this process's memory. */
export function createRateLimiter(defaultPerMinute: number, consume: ConsumeRateLimit = memoryRateLimitCounter()): RateLimiter {
  return {
    async consume(ctx, keyId, accountLimit) {
      const limit = accountLimit ?? defaultPerMinute;
      const state = await consume(keyId, limit, WINDOW_SECONDS);
      const resetSeconds = Math.max(1, Math.ceil(state.msBeforeReset / 1000));
      const headers = {
        'RateLimit-Policy': `${limit};w=${WINDOW_SECONDS}`,
        'RateLimit-Limit': String(limit),
        'RateLimit-Remaining': String(Math.max(0, state.remaining)),
        'RateLimit-Reset': String(resetSeconds),
      };
      if (!state.allowed) {
        recordRateLimited();
        throw new TooManyRequests(`Rate limit exceeded: ${limit} captures per minute for this API key; retry in ${resetSeconds} s`, resetSeconds, headers);
      }
      ctx.set(headers);
    },
  };
}

export function memoryRateLimitCounter(): ConsumeRateLimit {
  return rateLimitCounter((options) => new RateLimiterMemory(options));
}
