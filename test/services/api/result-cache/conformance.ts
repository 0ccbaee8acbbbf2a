import { expect } from 'chai';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import type { CacheEntry, ResultCache } from '../../../../services/api/src/result-cache/result-cache.ts';

/** A clock the test moves by hand, so that expiry and recency never depend on how fast the machine is. */
export class ManualClock {
  time = 1_700_000_000_000;
  now = () => this.time;
  advance(ms: number): void {
    this.time += ms;
  }
}

export const key = (n: number) => n.toString(16).padStart(64, '0');

export function entry(clock: ManualClock, bytes: number, ttlSeconds = 60, fill = 7): CacheEntry {
  return {
    image: Buffer.alloc(bytes, fill),
    format: 'webp',
    width: 320,
    height: 200,
    truncated: false,
    waitMs: 123,
    createdAt: clock.now(),
    expiresAt: clock.now() + ttlSeconds * 1000,
  };
}

export async function evictions(reason: 'size' | 'expired'): Promise<number> {
  const metric = await apiRegistry.getSingleMetric('viewfinder_result_cache_evictions_total')?.get();
  return metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/**
 * What every result cache backend must do. `open(maxBytes, clock)` opens a fresh, empty cache;
 * `dispose` removes it. Entries of 1000 image bytes against small bounds exercise the LRU; the
 * bound counts each backend's own overhead too, so the tests leave room for it.
 */
export function resultCacheConformance(open: (maxBytes: number, clock: ManualClock) => Promise<ResultCache>, dispose: (cache: ResultCache) => Promise<void>): void {
  let cache: ResultCache;
  let clock: ManualClock;
  const opened: ResultCache[] = [];
  const start = async (maxBytes = 10_000_000) => {
    clock = new ManualClock();
    cache = await open(maxBytes, clock);
    opened.push(cache);
    return cache;
  };
  afterEach(async () => {
    for (const c of opened.splice(0)) await dispose(c);
  });

  it('returns what was stored, every field and every byte', async () => {
    await start();
    const stored = entry(clock, 5000);
    stored.image[4999] = 42;
    await cache.put(key(1), stored);
    expect(await cache.get(key(1))).to.deep.equal(stored);
    expect(await cache.get(key(2))).to.equal(undefined);
  });

  it('replaces an entry stored again under the same key', async () => {
    await start();
    await cache.put(key(1), entry(clock, 1000, 60, 1));
    await cache.put(key(1), entry(clock, 2000, 60, 2));
    const found = await cache.get(key(1));
    expect(found?.image.length).to.equal(2000);
    expect(found?.image[0]).to.equal(2);
  });

  it('forgets an entry once it expires, and counts it as evicted (expired)', async () => {
    await start();
    const before = await evictions('expired');
    await cache.put(key(1), entry(clock, 1000, 10));
    clock.advance(9_999);
    expect(await cache.get(key(1))).to.not.equal(undefined);
    clock.advance(1);
    expect(await cache.get(key(1))).to.equal(undefined);
    expect(await evictions('expired')).to.equal(before + 1);
    expect(await cache.get(key(1))).to.equal(undefined);
  });

  it('keeps under its size bound by evicting the least recently used entries', async () => {
    await start(3_800);
    const before = await evictions('size');
    await cache.put(key(1), entry(clock, 1000));
    clock.advance(1000);
    await cache.put(key(2), entry(clock, 1000));
    clock.advance(1000);
    await cache.put(key(3), entry(clock, 1000));
    clock.advance(1000);
    // Reading 1 makes 2 the least recently used: the fourth entry pushes out 2, not 1.
    expect(await cache.get(key(1))).to.not.equal(undefined);
    clock.advance(1000);
    await cache.put(key(4), entry(clock, 1000));
    expect(await cache.get(key(2))).to.equal(undefined);
    for (const n of [1, 3, 4]) expect(await cache.get(key(n)), `entry ${n}`).to.not.equal(undefined);
    expect(await evictions('size')).to.equal(before + 1);
    expect(await cache.sizeBytes()).to.be.at.most(3_800).and.at.least(3_000);
  });

  it('reports the bytes it holds', async () => {
    await start();
    expect(await cache.sizeBytes()).to.equal(0);
    await cache.put(key(1), entry(clock, 1000));
    await cache.put(key(2), entry(clock, 3000));
    expect(await cache.sizeBytes()).to.be.at.least(4000).and.below(6000);
  });
}
