/**
 * Settle-time hints: the SPEC's "smart wait time chosen by the service from the URL".
 * Each page (origin and path, without query) keeps a moving average of how long it took to become
 * ready. Once a page has history, its wait is capped near that average instead of at
 * SMART_WAIT_MAX_MS, so a page that never calms down (an endless animation, a ticker) costs the
 * full cap once, not on every capture. Pages of one host differ too much to share a hint.
 * Kept in memory, least recently used pages dropped first.
 */
export interface SettleHintsOptions {
  maxPages: number;
  /** Weight of the newest observation in the moving average. */
  alpha: number;
  /** Observations before the average is trusted. */
  minSamples: number;
}

interface Hint {
  averageMs: number;
  samples: number;
}

export class SettleHints {
  readonly #options: SettleHintsOptions;
  readonly #hints = new Map<string, Hint>();

  constructor(options: Partial<SettleHintsOptions> = {}) {
    this.#options = { maxPages: 10_000, alpha: 0.3, minSamples: 2, ...options };
  }

  get size(): number {
    return this.#hints.size;
  }

  record(url: string, settleMs: number): void {
    const key = pageKey(url);
    const previous = this.#hints.get(key);
    this.#hints.delete(key);
    const averageMs = previous ? previous.averageMs + this.#options.alpha * (settleMs - previous.averageMs) : settleMs;
    this.#hints.set(key, { averageMs, samples: (previous?.samples ?? 0) + 1 });
    if (this.#hints.size > this.#options.maxPages) {
      const oldest = this.#hints.keys().next().value as string;
      this.#hints.delete(oldest);
    }
  }

  /** The longest the smart wait should wait for this page: twice its average plus a second, within [minMs, maxMs]. */
  capFor(url: string, minMs: number, maxMs: number): number {
    const hint = this.#hints.get(pageKey(url));
    if (!hint || hint.samples < this.#options.minSamples) return maxMs;
    return Math.round(Math.min(maxMs, Math.max(minMs, 2 * hint.averageMs + 1000)));
  }
}

function pageKey(url: string): string {
  const parsed = URL.parse(url);
  return parsed ? `${parsed.origin}${parsed.pathname}` : url;
}
