/**
 * make bench: the result cache's worth. The same capture through the API (in-process Chromium,
 * the embedded disk cache in a temporary DATA_DIR) as a miss, which renders and stores, and as a
 * hit, which answers from the cache. Misses use a fresh query string each, so every one renders.
 * Prints latencies and the hit/miss ratio (the goal is under 0.1); asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createLogger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { openResultCache } from '../services/api/src/result-cache/open.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { fmt, median, percentile } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const HIT_SAMPLES = SAMPLES * 5;

const fixtures = await startFixtureServer();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-cache-bench-'));
const config = loadApiConfig({ ...process.env, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: '1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
const logger = createLogger({ level: 'warn', name: 'bench' });
const renderer = await createChromiumRenderer(config.renderer, logger);
const resultCache = await openResultCache(config.resultCache);
const app = createApp({ config, renderer, logger, resultCache }).callback();

async function timed(body: Record<string, unknown>): Promise<{ ms: number; cached: unknown }> {
  const started = performance.now();
  const response = await request(app).post('/screenshot').set('Content-Type', 'application/json').send(body);
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`capture failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { ms, cached: response.body.cached };
}

try {
  const body = (n: number) => ({ url: fixtures.url(`/simple?n=${n}`), cacheTtl: 3600 });
  await timed(body(-1)); // warm-up: the first capture pays for lazy set-up

  const misses: number[] = [];
  for (let n = 0; n < SAMPLES; n++) {
    const { ms, cached } = await timed(body(n));
    if (cached !== false) throw new Error('expected a miss');
    misses.push(ms);
  }
  const hits: number[] = [];
  for (let n = 0; n < HIT_SAMPLES; n++) {
    const { ms, cached } = await timed(body(n % SAMPLES));
    if (cached !== true) throw new Error('expected a hit');
    hits.push(ms);
  }

  const row = (name: string, values: number[]) => `  ${name.padEnd(6)} n=${String(values.length).padEnd(4)} median ${fmt(median(values)).padStart(8)} ms   p95 ${fmt(percentile(values, 95)).padStart(8)} ms`;
  console.log('Result cache (disk, POST /screenshot of /simple, standard png, smart wait, one capture at a time)');
  console.log(row('miss', misses));
  console.log(row('hit', hits));
  console.log(`  hit/miss median ratio ${fmt(median(hits) / median(misses), 4)} (goal < 0.1), p95 ratio ${fmt(percentile(hits, 95) / percentile(misses, 95), 4)}`);
} finally {
  await renderer.close();
  await resultCache.close();
  await fixtures.close();
  rmSync(dataDir, { recursive: true, force: true });
}
