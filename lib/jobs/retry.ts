/**
 * When a failed job runs again: exponential backoff with jitter, up to a fixed number of attempts.
 * The delay after failed attempt n (1-based) is base * 2^(n-1), capped at maxDelayMs, of which a
 * random half is taken away ("equal jitter"), so that jobs that failed together (a receiver that
 * was down) do not all come back in the same instant, and none comes back sooner than half its step.
 */
export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export function retryDelayMs(policy: RetryPolicy, failedAttempt: number, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failedAttempt - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/** The longest time from the first attempt to the last one's start: what a policy promises to cover. */
export function minimumRetrySpanMs(policy: RetryPolicy): number {
  let total = 0;
  for (let attempt = 1; attempt < policy.maxAttempts; attempt++) total += retryDelayMs(policy, attempt, () => 0);
  return total;
}

/** A failure that another attempt cannot fix (a refused target, an invalid request): the job fails at once. */
export class PermanentJobError extends Error {
  override readonly name = 'PermanentJobError';
}
