/**
 * Monitor captures never crowd out API clients: they go through the same renderer (the same
 * dispatch as /api/screenshot), at most `sharePercent` of the tier's slots at once (at least one),
 * and only while a slot beyond the one they take stays free for clients (when the tier has more
 * than one). Otherwise they wait, looking again every `pollMs` or when one of theirs ends.
 */
import type { Renderer } from '../../../renderer/src/renderer.ts';

export interface MonitorSlots {
  /** Resolves with the release function once a monitor capture may start. */
  acquire(signal?: AbortSignal): Promise<() => void>;
  inUse(): number;
}

export function monitorSlots(renderer: Renderer, sharePercent: number, pollMs = 200): MonitorSlots {
  let mine = 0;
  const wakers = new Set<() => void>();
  const mayStart = () => {
    const { capacity, inFlight, queued } = renderer.stats();
    const limit = Math.max(1, Math.floor((capacity * sharePercent) / 100));
    const free = capacity - inFlight - queued;
    const reserve = capacity > 1 ? 1 : 0;
    return mine < limit && free - 1 >= reserve;
  };
  return {
    async acquire(signal) {
      while (!mayStart()) {
        signal?.throwIfAborted();
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            wakers.delete(wake);
            signal?.removeEventListener('abort', wake);
            resolve();
          };
          const timer = setTimeout(wake, pollMs);
          wakers.add(wake);
          signal?.addEventListener('abort', wake, { once: true });
        });
      }
      mine += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        mine -= 1;
        for (const wake of [...wakers]) wake();
      };
    },
    inUse: () => mine,
  };
}
