import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/**
 * Rate-limit counters behind the store port: a fixed window per key, counted in whatever the backend
 * holds (rate-limiter-flexible's SQLite limiter on the embedded file, its memory limiter for a
 * process with no shared store, and for MongoDB the store's own points in mongo-rate-limit.ts), so
 * that every API replica on one store counts against the same budget.
 */
export interface RateLimitState {
  allowed: boolean;
  /** What is left of the budget in this window (0 when refused). */
  remaining: number;
  /** Until the window resets. */
  msBeforeReset: number;
}

/** Takes one point from `key`'s budget of `limit` per `windowSeconds`. */
export type ConsumeRateLimit = (key: string, limit: number, windowSeconds: number) => Promise<RateLimitState>;

export type RateLimiterFactory = (options: { points: number; duration: number; keyPrefix: string }) => RateLimiterAbstract;

export function rateLimitCounter(create: RateLimiterFactory): ConsumeRateLimit {
  // A limiter fixes its points and window, so there is one per distinct pair; the key prefix keeps
  // their counters apart when an account's limit changes.
  const limiters = new Map<string, RateLimiterAbstract>();
  return async (key, limit, windowSeconds) => {
    const id = `${limit}/${windowSeconds}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = create({ points: limit, duration: windowSeconds, keyPrefix: `rl-${limit}-per-${windowSeconds}s` });
      limiters.set(id, limiter);
    }
    try {
      const state = await limiter.consume(key);
      return { allowed: true, remaining: state.remainingPoints, msBeforeReset: state.msBeforeNext };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return { allowed: false, remaining: 0, msBeforeReset: err.msBeforeNext };
    }
  };
}
