import { sleep } from './sleep.ts';

/**
 * Waits for `evaluation`, work in the page paced by the page's own frames or timers
 * (`requestAnimationFrame`, `setTimeout`, animations), for at most `maxMs` as Node counts. A page
 * that makes no frames (hidden, busy) or has replaced those functions with ones that never call
 * back would otherwise hold the capture until its deadline; what it has not done by then is not
 * waited for. An evaluation that fails within the time fails the wait, as it would have without it.
 */
export async function waitAtMost(maxMs: number, evaluation: Promise<unknown>): Promise<void> {
  // Settling after the bound is no one's concern.
  evaluation.catch(() => undefined);
  const timer = new AbortController();
  try {
    await Promise.race([evaluation, sleep(maxMs, timer.signal).catch(() => undefined)]);
  } finally {
    timer.abort();
  }
}

/** Longest wait for two of the page's frames (33 ms at 60 Hz): only a page that makes none waits this long. */
export const TWO_FRAMES_MAX_MS = 250;
