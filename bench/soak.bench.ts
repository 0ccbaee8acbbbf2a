/**
 * make bench-soak: many captures in a row through the HTTP API (SOAK_CAPTURES, default 1000, at
 * SOAK_CONCURRENCY, default RENDER_CONCURRENCY or 2), printing at the start, every tenth of the
 * way and at the end: the resident memory of the service and of its Chromium processes, and the
 * file count and size of the renderer's temp directories and of the whole TMPDIR. After the pool
 * is closed, its temp root must be empty. Prints figures; asserts nothing but that.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { processTreeRss, rssOf } from '../services/renderer/src/process-memory.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { fmt, median, percentile, runConcurrently } from './stats.ts';

const CAPTURES = Number(process.env.SOAK_CAPTURES ?? 1000);
const config = loadApiConfig({
  ...process.env,
  PRIVATE_NETWORK_ALLOWLIST: process.env.PRIVATE_NETWORK_ALLOWLIST ?? '127.0.0.0/8',
  RENDER_CONCURRENCY: process.env.RENDER_CONCURRENCY ?? '2',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? config.renderer.concurrency);
const MIB = 1024 * 1024;

function treeOf(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else {
        files += 1;
        try {
          bytes += fs.lstatSync(full).size;
        } catch {
          // removed meanwhile
        }
      }
    }
  }
  return { files, bytes };
}

/** Chromium-named leftovers loose in TMPDIR: what a leaking service would pile up there. */
function looseChromiumEntries(): number {
  return fs.readdirSync(os.tmpdir()).filter((name) => /^(puppeteer_dev_|\.org\.chromium\.|\.com\.google\.Chrome)/.test(name)).length;
}

function report(label: string): void {
  const serviceRss = rssOf(process.pid);
  const browsersRss = (processTreeRss(process.pid) ?? 0) - serviceRss;
  const renderer = treeOf(config.renderer.tempRoot);
  const tmp = treeOf(os.tmpdir());
  console.log(
    `${label.padEnd(16)} service RSS ${fmt(serviceRss / MIB).padStart(7)} MiB | Chromium RSS ${fmt(browsersRss / MIB).padStart(7)} MiB | ` +
      `renderer temp ${String(renderer.files).padStart(5)} files ${fmt(renderer.bytes / MIB).padStart(7)} MiB | ` +
      `TMPDIR ${String(tmp.files).padStart(6)} files ${fmt(tmp.bytes / MIB).padStart(8)} MiB, ${looseChromiumEntries()} loose Chromium entries`,
  );
}

const fixtures = await startFixtureServer();
const logger = createLogger({ level: config.logLevel });
const renderer = await createChromiumRenderer(config.renderer, logger);
const server = http.createServer(createApp({ config, renderer, logger }).callback());
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/screenshot`;

// A mix that exercises every profile, full page and waits, on pages of different weight.
const bodies = [
  { url: fixtures.url('/simple') },
  { url: fixtures.url('/geometry'), quality: 'mobile' },
  { url: fixtures.url('/tall?height=4000'), fullPage: true },
  { url: fixtures.url('/simple'), quality: 'retina' },
  { url: fixtures.url('/late-paint?after=100'), quality: 'high', removeAds: false },
];
const statuses = new Map<number, number>();
let done = 0;
const capture = async () => {
  const body = bodies[done % bodies.length];
  const response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  done += 1;
  if (done % Math.max(1, Math.floor(CAPTURES / 10)) === 0 && done < CAPTURES) report(`after ${done}`);
};

console.log(`Viewfinder soak: ${CAPTURES} captures at concurrency ${CONCURRENCY}, pool of ${config.renderer.concurrency}, recycle after ${config.renderer.recycleAfterCaptures}`);
console.log(`renderer temp root: ${config.renderer.tempRoot}; TMPDIR: ${os.tmpdir()}\n`);
await runConcurrently(3, 1, capture);
done = 0;
statuses.clear();
report('start');
const run = await runConcurrently(CAPTURES, CONCURRENCY, capture);
report('end');

const stats = renderer.stats();
server.close();
await renderer.close();
await fixtures.close();
report('after close');
// Chromium's TMPDIR may live in a short runtime root of its own (docs/safety.md, "Where the browsers keep their files").
const browserRoots = [...new Set([config.renderer.tempRoot, config.renderer.runtimeRoot])];
const left = { files: browserRoots.reduce((files, root) => files + treeOf(root).files, 0) };

console.log('');
console.log(`statuses: ${[...statuses].map(([status, count]) => `${status} x${count}`).join(', ')}`);
console.log(`latency median ${fmt(median(run.durations))} ms, p95 ${fmt(percentile(run.durations, 95))} ms, ${fmt(run.perSecond)} captures/s`);
console.log(`browser restarts ${stats.browserRestarts}, crashes ${stats.browserCrashes}`);
if (left.files > 0) {
  console.error(`FAIL: ${left.files} files left under ${browserRoots.join(' and ')} after the pool closed`);
  process.exit(1);
}
