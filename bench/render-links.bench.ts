/**
 * Render links' latency (docs/render-links.md#latency): signed GET /api/render links over real
 * HTTP on loopback (the hosted API with in-process Chromium, the embedded store and disk cache in
 * a temporary DATA_DIR), as a miss, which checks the signature, renders and stores, and as a hit,
 * the same link again, answered from the result cache; and If-None-Match answered 304. Misses use
 * a fresh page query each, so every one renders. Prints the figures; asserts nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../lib/logger.ts';
import { signRenderLink } from '../lib/render-links.ts';
import { openStore } from '../lib/store/open.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { openResultCache } from '../services/api/src/result-cache/open.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { fmt, median, percentile } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);

const fixtures = await startFixtureServer();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-links-bench-'));
const config = loadApiConfig({
  ...process.env,
  MODE: 'hosted',
  PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8',
  RENDER_CONCURRENCY: '1',
  RATE_LIMIT_PER_MINUTE: '100000',
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
});
const logger = createLogger({ level: 'warn', name: 'bench' });
const renderer = await createChromiumRenderer(config.renderer, logger);
const resultCache = await openResultCache(config.resultCache);
const store = await openStore(config.store);
const account = await store.createAccount({ name: 'bench' });
const site = await store.createSite({ accountId: account.id, name: 'bench', allowedDomains: [] });
const { key, signingSecret } = await store.createKey({ accountId: account.id, name: 'links', kind: 'site', siteId: site.id });
const server = http.createServer(createApp({ config, renderer, logger, store, resultCache }).callback());
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const link = (n: number) =>
  signRenderLink({ origin, options: [['url', fixtures.url(`/simple?n=${n}`)], ['cacheTtl', '3600']], keyId: key.id, signingSecret, expires: Math.floor(Date.now() / 1000) + 3600 });

async function timed(url: string, expected: number, headers: Record<string, string> = {}): Promise<{ ms: number; etag: string; cache: string }> {
  const started = performance.now();
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== expected) throw new Error(`expected ${expected}, got ${response.status}: ${url}`);
  return { ms, etag: response.headers.get('etag') ?? '', cache: response.headers.get('viewfinder-cache') ?? '' };
}

try {
  await timed(link(-1), 200); // warm-up: the first capture pays for lazy set-up
  const links = Array.from({ length: SAMPLES }, (_, n) => link(n));
  const misses: number[] = [];
  const etags: string[] = [];
  for (const url of links) {
    const { ms, etag, cache } = await timed(url, 200);
    if (cache !== 'miss') throw new Error('expected a miss');
    misses.push(ms);
    etags.push(etag);
  }
  const hits: number[] = [];
  const notModified: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const [n, url] of links.entries()) {
      const { ms, cache } = await timed(url, 200);
      if (cache !== 'hit') throw new Error('expected a hit');
      hits.push(ms);
      notModified.push((await timed(url, 304, { 'If-None-Match': etags[n] as string })).ms);
    }
  }
  const row = (name: string, values: number[]) =>
    `  ${name.padEnd(14)} n=${String(values.length).padEnd(4)} median ${fmt(median(values)).padStart(8)} ms   p90 ${fmt(percentile(values, 90)).padStart(8)} ms`;
  console.log('Render links (signed GET /api/render of /simple, standard png, cacheTtl 3600, over loopback HTTP, one at a time)');
  console.log(row('miss (renders)', misses));
  console.log(row('hit (cache)', hits));
  console.log(row('304', notModified));
} finally {
  server.close();
  await renderer.close();
  await resultCache.close();
  await store.close();
  await fixtures.close();
  rmSync(dataDir, { recursive: true, force: true });
}
