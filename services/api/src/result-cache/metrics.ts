/**
 * The result cache's metrics, in the API's registry. Hits and misses count requests that asked for
 * the cache (cacheTtl > 0); evictions count entries removed for space or age; bytes is what the
 * cache holds now, read from the backend at scrape time.
 */
import { Counter, Gauge } from 'prom-client';
import { apiRegistry } from '../metrics.ts';

export const EVICTION_REASONS = ['size', 'expired'] as const;
export type EvictionReason = (typeof EVICTION_REASONS)[number];

const hits = new Counter({
  name: 'viewfinder_result_cache_hits_total',
  help: 'Screenshot requests answered from the result cache without rendering.',
  registers: [apiRegistry],
});

const misses = new Counter({
  name: 'viewfinder_result_cache_misses_total',
  help: 'Screenshot requests with a cacheTtl that found no fresh entry and rendered.',
  registers: [apiRegistry],
});

const evictions = new Counter({
  name: 'viewfinder_result_cache_evictions_total',
  help: 'Entries removed from the result cache, by reason: size (LRU, over the size bound) or expired.',
  labelNames: ['reason'] as const,
  registers: [apiRegistry],
});
for (const reason of EVICTION_REASONS) evictions.inc({ reason }, 0);

let bytesSource: (() => Promise<number>) | undefined;

new Gauge({
  name: 'viewfinder_result_cache_bytes',
  help: 'Bytes of images held by the result cache (0 when none is open).',
  registers: [apiRegistry],
  async collect() {
    this.set(bytesSource ? await bytesSource().catch(() => 0) : 0);
  },
});

export function recordCacheLookup(hit: boolean): void {
  (hit ? hits : misses).inc();
}

export function recordEviction(reason: EvictionReason, count = 1): void {
  if (count > 0) evictions.inc({ reason }, count);
}

/** The cache whose size the bytes gauge reports: the one the running API opened. */
export function reportCacheSize(source: (() => Promise<number>) | undefined): void {
  bytesSource = source;
}
