/**
 * A rate-limited work queue in the manner of client-go's: a key is queued at most once however
 * often it is added (deduplication); a key being processed is never handed to a second worker, and
 * an add during processing queues it again once the worker is done (so no change is lost). Failed
 * keys come back after a per-key exponential delay (baseDelayMs doubling, capped at maxDelayMs),
 * and all retries together are held to a token bucket, so a storm of failures cannot spin.
 */
export interface WorkQueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Retries allowed per second, overall, once the burst is used. */
  retriesPerSecond?: number;
  retryBurst?: number;
  /** Called whenever the number of queued keys changes (the queue-depth gauge). */
  onDepth?: (depth: number) => void;
  now?: () => number;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  /** Added while processing: queued again when done. */
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly retriesPerSecond: number;
  private readonly retryBurst: number;
  private readonly onDepth: (depth: number) => void;
  private readonly now: () => number;
  private tokens: number;
  private tokensAt: number;
  private shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 300_000;
    this.retriesPerSecond = options.retriesPerSecond ?? 10;
    this.retryBurst = options.retryBurst ?? 100;
    this.onDepth = options.onDepth ?? (() => {});
    this.now = options.now ?? Date.now;
    this.tokens = this.retryBurst;
    this.tokensAt = this.now();
  }

  get depth(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
    this.onDepth(this.queue.length);
  }

  /** Adds the key after delayMs; an earlier pending delayed add of the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    if (this.timers.has(key)) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Adds the key again after its backoff: the longer of the per-key delay and the overall bucket's wait. */
  addRateLimited(key: string): number {
    const delay = Math.max(this.nextBackoff(key), this.bucketDelay());
    this.addAfter(key, delay);
    return delay;
  }

  /** The per-key exponential delay, counting this failure. */
  nextBackoff(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    return Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
  }

  /** The key succeeded: its next failure starts from the base delay again. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, or undefined once the queue shuts down. Pair every key with done(key). */
  async get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      this.onDepth(this.queue.length);
      return key;
    }
    if (this.shuttingDown) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  private bucketDelay(): number {
    const now = this.now();
    this.tokens = Math.min(this.retryBurst, this.tokens + ((now - this.tokensAt) / 1000) * this.retriesPerSecond);
    this.tokensAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.retriesPerSecond) * 1000);
  }
}
