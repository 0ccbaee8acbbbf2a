import { setTimeout as delay } from 'node:timers/promises';

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : {}).catch((err: unknown) => {
    throw signal?.aborted ? signal.reason : err;
  });
}
