import { TooManyRequests } from '../../../lib/errors.ts';

/**
 * Admission control in front of the browser pool: `capacity` captures run, `queueLimit` more wait
 * in arrival order, and anything beyond is refused at once with 429 and a Retry-After estimated
 * from how long recent captures took.
 */
export interface Admission {
  /** Waits for a slot; rejects with TooManyRequests when the queue is full, or with the signal's reason. */
  acquire(signal: AbortSignal): Promise<Slot>;
  running(): number;
  queued(): number;
}

export interface Slot {
  /** Frees the slot for the next waiter; `durationMs` feeds the Retry-After estimate. */
  release(durationMs: number): void;
}

interface Waiter {
  grant(slot: Slot): void;
}

const RECENT_DURATIONS = 20;
/** Assumed capture duration until real ones are known. */
const FIRST_GUESS_MS = 3000;

export function createAdmission(capacity: number, queueLimit: number): Admission {
  let running = 0;
  const waiting: Waiter[] = [];
  const recentMs: number[] = [];

  const retryAfterSeconds = () => {
    const averageMs = recentMs.length === 0 ? FIRST_GUESS_MS : recentMs.reduce((sum, ms) => sum + ms, 0) / recentMs.length;
    // The whole queue must drain through `capacity` slots before a new request would start.
    return (averageMs * (waiting.length / capacity + 1)) / 1000;
  };

  const slot = (): Slot => {
    let released = false;
    return {
      release(durationMs) {
        if (released) return;
        released = true;
        recentMs.push(durationMs);
        if (recentMs.length > RECENT_DURATIONS) recentMs.shift();
        const next = waiting.shift();
        if (next) next.grant(slot());
        else running -= 1;
      },
    };
  };

  return {
    running: () => running,
    queued: () => waiting.length,
    acquire(signal) {
      signal.throwIfAborted();
      if (running < capacity) {
        running += 1;
        return Promise.resolve(slot());
      }
      if (waiting.length >= queueLimit) {
        return Promise.reject(new TooManyRequests('Too many requests: the render queue is full, retry later', retryAfterSeconds()));
      }
      return new Promise<Slot>((resolve, reject) => {
        const waiter: Waiter = {
          grant(granted) {
            signal.removeEventListener('abort', onAbort);
            resolve(granted);
          },
        };
        // A request that gives up while queued leaves the queue and takes no slot.
        const onAbort = () => {
          const index = waiting.indexOf(waiter);
          if (index !== -1) waiting.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.push(waiter);
      });
    },
  };
}
