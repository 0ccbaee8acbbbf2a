/**
 * What removeAds costs: capture latency with removeAds true and false, interleaved on the same pool
 * so that both see the same machine load, and pool start-up with a cold and a warm engine cache.
 * Prints figures; asserts nothing. Run: node bench/remove-ads.bench.ts (BENCH_SAMPLES=40 by default).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../lib/logger.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import type { Renderer } from '../services/renderer/src/renderer.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { fmt, median, percentile } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const WARMUP = 5;

const cacheDir = await mkdtemp(path.join(os.tmpdir(), 'viewfinder-bench-cache-'));
// 127.0.0.2: EasyList switches generic cosmetic filtering off on 127.0.0.1.
const fixtures = await startFixtureServer('127.0.0.2');
const config = loadApiConfig({ ...process.env, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: '1', ADBLOCK_CACHE_DIR: cacheDir });
const logger = createLogger({ level: 'warn' });

async function timedStart(): Promise<{ renderer: Renderer; ms: number }> {
  const started = performance.now();
  const renderer = await createChromiumRenderer(config.renderer, logger);
  return { renderer, ms: performance.now() - started };
}

const cold = await timedStart();
await cold.renderer.close();
const { renderer, ms: warmStartMs } = await timedStart();

async function measure(pagePath: string) {
  const url = fixtures.url(pagePath);
  const times: Record<'on' | 'off', number[]> = { on: [], off: [] };
  for (let i = 0; i < WARMUP + SAMPLES; i += 1) {
    for (const removeAds of i % 2 === 0 ? [true, false] : [false, true]) {
      const t0 = performance.now();
      await renderer.capture({ url, quality: 'standard', fullPage: false, removeAds });
      if (i >= WARMUP) times[removeAds ? 'on' : 'off'].push(performance.now() - t0);
    }
  }
  return times;
}

console.log(`removeAds bench: ${SAMPLES} interleaved samples per figure, concurrency 1, machine load ${os.loadavg().map((n) => fmt(n, 2)).join(' ')}\n`);
console.log(`pool start-up: ${fmt(cold.ms, 0)} ms with a cold engine cache (parses the lists), ${fmt(warmStartMs, 0)} ms with a warm one\n`);
console.log(''.padEnd(22) + ['off median', 'off p95', 'on median', 'on p95', 'overhead'].map((h) => h.padStart(12)).join(''));
for (const pagePath of ['/simple', '/ads', '/consent/klaro', '/consent/cookie-notice']) {
  const { on, off } = await measure(pagePath);
  const cells = [median(off), percentile(off, 95), median(on), percentile(on, 95)].map((n) => fmt(n).padStart(12));
  console.log(pagePath.padEnd(22) + cells.join('') + `${fmt(median(on) - median(off))} ms`.padStart(12));
}
console.log(`\nmachine load after: ${os.loadavg().map((n) => fmt(n, 2)).join(' ')}`);

await renderer.close();
await fixtures.close();
await rm(cacheDir, { recursive: true, force: true });
