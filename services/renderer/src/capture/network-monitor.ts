import type { HTTPRequest, Page } from 'puppeteer-core';

/** Request types that stay open by design and say nothing about whether the page is complete. */
const STREAMING_TYPES = new Set(['eventsource', 'websocket']);

/**
 * The browser's own fetch of the page's icon (/favicon.ico, or what a <link rel="icon"> names): no
 * script and no parser asked for it, it is no navigation, and nothing of it is drawn in a capture.
 * It comes after the load event, often while the page is being cleaned or pictured, so counting it
 * made a page look busy that was not (an early picture thrown away, a smart wait looped once more).
 */
export function isIconFetch(request: HTTPRequest): boolean {
  return request.resourceType() === 'other' && request.initiator()?.type === 'other' && !request.isNavigationRequest();
}

/** Told of every request the page makes, the icon's included (a page report, report-collector.ts). */
export interface RequestObserver {
  started(request: HTTPRequest, at: number): void;
  ended(request: HTTPRequest, at: number, failed: boolean): void;
}

export interface NetworkMonitorOptions {
  /** A request open longer than this is treated as long-polling and no longer waited for. */
  longRequestMs: number;
  /** Absent unless the capture asked for a report. */
  observer?: RequestObserver;
}

/**
 * Counts a page's requests in flight, from before navigation until `stop()`. The network is quiet
 * when nothing is in flight but streams and long-polls. The page's icon is not the page's request.
 */
export class NetworkMonitor {
  readonly #page: Page;
  readonly #options: NetworkMonitorOptions;
  readonly #inFlight = new Map<HTTPRequest, number>();
  #lastActivity = performance.now();
  #waiters: (() => void)[] = [];

  constructor(page: Page, options: NetworkMonitorOptions) {
    this.#page = page;
    this.#options = options;
    page.on('request', this.#onStart);
    page.on('requestfinished', this.#onEnd);
    page.on('requestfailed', this.#onFail);
  }

  stop(): void {
    this.#page.off('request', this.#onStart);
    this.#page.off('requestfinished', this.#onEnd);
    this.#page.off('requestfailed', this.#onFail);
    this.#inFlight.clear();
    this.#wake();
  }

  /** When the last request started or ended (performance.now() clock). */
  get lastActivity(): number {
    return this.#lastActivity;
  }

  /** Requests that still count: not streams, not open for longer than `longRequestMs`. */
  pending(now = performance.now()): number {
    let count = 0;
    for (const started of this.#inFlight.values()) if (now - started < this.#options.longRequestMs) count += 1;
    return count;
  }

  /** True when some request has been open so long that it counts as long-polling (or hangs). */
  hasLongRequests(now = performance.now()): boolean {
    for (const started of this.#inFlight.values()) if (now - started >= this.#options.longRequestMs) return true;
    return false;
  }

  /** Resolves when the network is quiet, or at `deadline` (performance.now() clock); true when quiet. */
  async waitForQuiet(deadline: number): Promise<boolean> {
    for (;;) {
      const now = performance.now();
      if (this.pending(now) === 0) return true;
      if (now >= deadline) return false;
      // Wake on the next request event, or when the oldest pending request turns into a long-poll.
      const oldest = Math.min(...this.#inFlight.values());
      const untilLong = oldest + this.#options.longRequestMs - now;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, Math.min(untilLong, deadline - now)));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  readonly #onStart = (request: HTTPRequest) => {
    this.#options.observer?.started(request, performance.now());
    if (isIconFetch(request)) return;
    this.#lastActivity = performance.now();
    if (STREAMING_TYPES.has(request.resourceType())) return;
    this.#inFlight.set(request, this.#lastActivity);
  };

  readonly #onFail = (request: HTTPRequest) => this.#ended(request, true);
  readonly #onEnd = (request: HTTPRequest) => this.#ended(request, false);

  #ended(request: HTTPRequest, failed: boolean): void {
    this.#options.observer?.ended(request, performance.now(), failed);
    if (isIconFetch(request)) return;
    this.#lastActivity = performance.now();
    if (this.#inFlight.delete(request)) this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
