/**
 * Monitor captures never crowd out API clients. They go through the same renderer (the same
 * dispatch as /api/screenshot) and start only when all of these hold:
 *
 * - **their share:** at most `sharePercent` of the tier's slots at once (at least one);
 * - **never the last free slot:** a slot beyond the one they take stays free for clients (when the
 *   tier has more than one);
 * - **a quiet tier:** for the last `quietMs`, clients used no more slots than are left once the
 *   monitors' share and that spare slot are set aside (on a tier of 2 slots: no client capture at
 *   all). A free slot is not free CPU: a capture beside a client's slows the client's down (on two
 *   cores by half), so background captures take the tier's idle moments, not its gaps.
 *
 * Each monitor capture is also followed by a quiet window (the renderer readies a fresh page after
 * every capture, which a client arriving then would share the CPU with).
 *
 * And a monitor capture yields: when clients come back while it runs, its slot's `preempted`
 * signal aborts it (the renderer drops the capture), and it waits for the next quiet moment.
 *
 * A capture that has waited `maxWaitMs` in all for a quiet moment stops asking for one and is no
 * longer preempted (the first two rules still hold), so that monitors still progress on a tier that
 * clients never leave idle. While monitors wait or run, the tier is sampled every `sampleMs`, so
 * that a client capture between two looks is not missed.
 */
import type { Renderer } from '../../../renderer/src/renderer.ts';

export interface MonitorSlot {
  /** Aborts when clients came back while this slot's capture runs: abort the capture, release, ask again. */
  preempted: AbortSignal;
  release(): void;
}

export interface MonitorSlots {
  /**
   * Resolves once a monitor capture may start. `waitingSince`: when this capture first asked
   * (a preempted capture asks again, and its waits add up towards maxWaitMs).
   */
  acquire(signal?: AbortSignal, waitingSince?: number): Promise<MonitorSlot>;
  inUse(): number;
}

export interface MonitorSlotTiming {
  /** How long clients must have left the monitors' slots alone before a monitor capture starts. */
  quietMs: number;
  /** How long a monitor capture waits for a quiet moment before it settles for a free slot. */
  maxWaitMs: number;
  /** How often the tier's load is looked at while monitors wait or run. */
  sampleMs: number;
}

export const DEFAULT_SLOT_TIMING: MonitorSlotTiming = { quietMs: 1000, maxWaitMs: 60_000, sampleMs: 50 };

/** After their last capture, monitors keep watching the tier this long, so a run's next page knows its recent past. */
const WATCH_AFTER_MS = 10_000;

export function monitorSlots(renderer: Renderer, sharePercent: number, timing: MonitorSlotTiming = DEFAULT_SLOT_TIMING): MonitorSlots {
  let mine = 0;
  let waiting = 0;
  /** When clients last used more than the quiet level; undefined: not watched since the last pause. */
  let lastBusyAt: number | undefined;
  let lastActivityAt = 0;
  let sampler: NodeJS.Timeout | undefined;
  const wakers = new Set<() => void>();
  /** Slots held by captures that still yield to clients. */
  const yielding = new Set<AbortController>();

  const load = () => {
    const { capacity, inFlight, queued } = renderer.stats();
    const limit = Math.max(1, Math.floor((capacity * sharePercent) / 100));
    const reserve = capacity > 1 ? 1 : 0;
    const clients = Math.max(0, inFlight + queued - mine);
    return { limit, free: capacity - inFlight - queued, reserve, quietLevel: Math.max(0, capacity - limit - reserve), clients };
  };
  /** Reads the tier once: notes clients beyond the quiet level (preempting yielding captures), and answers the load. */
  const sample = (now: number) => {
    const current = load();
    if (current.clients > current.quietLevel) {
      lastBusyAt = now;
      for (const held of yielding) held.abort(new Error('a client capture came: the monitor capture yields'));
      yielding.clear();
    }
    return current;
  };
  const watch = () => {
    const now = Date.now();
    lastActivityAt = now;
    if (sampler) return;
    lastBusyAt = now; // nothing is known of the time before: wait a quiet window first
    sampler = setInterval(() => {
      const at = Date.now();
      sample(at);
      if (mine === 0 && waiting === 0 && at - lastActivityAt > WATCH_AFTER_MS) {
        clearInterval(sampler);
        sampler = undefined;
        lastBusyAt = undefined;
      }
    }, timing.sampleMs);
    sampler.unref();
  };
  const mayStart = (since: number) => {
    const now = Date.now();
    const { limit, free, reserve } = sample(now);
    if (mine >= limit || free - 1 < reserve) return false;
    const quiet = lastBusyAt !== undefined && now - lastBusyAt >= timing.quietMs;
    return quiet || now - since >= timing.maxWaitMs;
  };

  return {
    async acquire(signal, since = Date.now()) {
      watch();
      waiting += 1;
      try {
        while (!mayStart(since)) {
          signal?.throwIfAborted();
          await new Promise<void>((resolve) => {
            const wake = () => {
              clearTimeout(timer);
              wakers.delete(wake);
              signal?.removeEventListener('abort', wake);
              resolve();
            };
            const timer = setTimeout(wake, timing.sampleMs);
            wakers.add(wake);
            signal?.addEventListener('abort', wake, { once: true });
          });
        }
      } finally {
        waiting -= 1;
      }
      mine += 1;
      const preemption = new AbortController();
      // A capture that waited its longest in all keeps its slot whatever comes.
      if (Date.now() - since < timing.maxWaitMs) yielding.add(preemption);
      let released = false;
      return {
        preempted: preemption.signal,
        release() {
          if (released) return;
          released = true;
          yielding.delete(preemption);
          mine -= 1;
          lastActivityAt = Date.now();
          // The renderer readies a fresh page after every capture: the next starts a quiet window later.
          lastBusyAt = lastActivityAt;
          for (const wake of [...wakers]) wake();
        },
      };
    },
    inUse: () => mine,
  };
}
