/**
 * make bench-soak: many captures in a row through the HTTP API (SOAK_CAPTURES, default 2000, at
 * SOAK_CONCURRENCY, default RENDER_CONCURRENCY or 2), printing at the start, every tenth of the
 * way, right after each browser recycle and at the end: the service's resident memory and V8 heap,
 * the RSS and summed PSS of its Chromium processes, and the file count and size of the renderer's
 * temp directories and of the whole TMPDIR. Then the service's RSS growth from capture 200 to the
 * end (target <= 10%) and Chromium's PSS right after each recycle. After the pool is closed, its
 * temp root must be empty. Prints figures; asserts nothing but that.
 *
 * SOAK_HEAP_SNAPSHOTS=200,800,1600 also writes a V8 heap snapshot of the service after those
 * captures (into SOAK_HEAP_DIR, default TMPDIR), for bench/heap-compare.ts. Writing one stalls
 * the service for seconds and leaves its own memory behind, so the memory figures of such a run
 * are not the ones to quote.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { createLogger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { processTree, pssOf, rssOf } from '../services/renderer/src/process-memory.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { fmt, median, percentile, runConcurrently } from './stats.ts';

const CAPTURES = Number(process.env.SOAK_CAPTURES ?? 2000);
const config = loadApiConfig({
  ...process.env,
  PRIVATE_NETWORK_ALLOWLIST: process.env.PRIVATE_NETWORK_ALLOWLIST ?? '127.0.0.0/8',
  RENDER_CONCURRENCY: process.env.RENDER_CONCURRENCY ?? '2',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? config.renderer.concurrency);
const MIB = 1024 * 1024;
/** The capture from which growth is measured: by then every code path has run and been compiled. */
const BASELINE_CAPTURE = 200;
const HEAP_SNAPSHOTS = new Set((process.env.SOAK_HEAP_SNAPSHOTS ?? '').split(',').filter(Boolean).map(Number));
const HEAP_DIR = process.env.SOAK_HEAP_DIR ?? os.tmpdir();

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

interface Sample {
  label: string;
  captures: number;
  serviceRss: number;
  chromiumPss: number;
}
const samples: Sample[] = [];

function report(label: string, captures = done): void {
  const serviceRss = rssOf(process.pid);
  const heap = process.memoryUsage();
  const spaces = v8.getHeapSpaceStatistics();
  const spaceSize = (name: string) => spaces.find((space) => space.space_name === name)?.space_size ?? 0;
  const chromium = (processTree(process.pid) ?? []).filter((pid) => pid !== process.pid);
  const chromiumRss = chromium.reduce((sum, pid) => sum + rssOf(pid), 0);
  const chromiumPss = chromium.reduce((sum, pid) => sum + pssOf(pid), 0);
  const renderer = treeOf(config.renderer.tempRoot);
  const tmp = treeOf(os.tmpdir());
  samples.push({ label, captures, serviceRss, chromiumPss });
  console.log(
    `${label.padEnd(22)} ${String(captures).padStart(5)} | service RSS ${fmt(serviceRss / MIB).padStart(6)} MiB, heap ${fmt(heap.heapUsed / MIB).padStart(5)} of ${fmt(heap.heapTotal / MIB).padStart(5)} MiB (young ${fmt(spaceSize('new_space') / MIB).padStart(5)}, old ${fmt(spaceSize('old_space') / MIB).padStart(5)}), external ${fmt(heap.external / MIB).padStart(5)} MiB | ` +
      `Chromium ${String(chromium.length).padStart(2)} procs, RSS ${fmt(chromiumRss / MIB).padStart(6)} MiB, PSS ${fmt(chromiumPss / MIB).padStart(6)} MiB | ` +
      `renderer temp ${String(renderer.files).padStart(4)} files ${fmt(renderer.bytes / MIB).padStart(5)} MiB | ` +
      `TMPDIR ${String(tmp.files).padStart(5)} files ${fmt(tmp.bytes / MIB).padStart(6)} MiB, ${looseChromiumEntries()} loose Chromium entries`,
  );
}

const fixtures = await startFixtureServer();
const logger = createLogger({ level: config.logLevel });
const renderer = await createChromiumRenderer(config.renderer, logger);
// Keep-alive outlasts a heap snapshot's pause, which would otherwise close sockets the client is about to reuse.
const server = http.createServer({ keepAliveTimeout: 65_000 }, createApp({ config, renderer, logger }).callback());
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
let sent = 0;
let restartsSeen = 0;
const capture = async () => {
  const body = bodies[sent++ % bodies.length];
  const response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  done += 1;
  const restarts = renderer.stats().browserRestarts;
  if (restarts > restartsSeen) {
    restartsSeen = restarts;
    report(`after recycle ${restarts}`);
  } else if (done % Math.max(1, Math.floor(CAPTURES / 10)) === 0 && done < CAPTURES) report('');
  if (HEAP_SNAPSHOTS.has(done)) {
    const file = v8.writeHeapSnapshot(path.join(HEAP_DIR, `viewfinder-soak-${process.pid}-${done}.heapsnapshot`));
    console.log(`heap snapshot after ${done} captures: ${file}`);
  }
};

console.log(`Viewfinder soak: ${CAPTURES} captures at concurrency ${CONCURRENCY}, pool of ${config.renderer.concurrency}, recycle after ${config.renderer.recycleAfterCaptures}`);
console.log(`renderer temp root: ${config.renderer.tempRoot}; TMPDIR: ${os.tmpdir()}`);
// The service's young generation is capped where it is deployed (Dockerfile, Makefile); the figures hold only with the same cap.
console.log(`Node ${process.version}, V8 flags: ${[process.env.NODE_OPTIONS ?? '', ...process.execArgv].join(' ').trim() || 'none'}\n`);
await runConcurrently(3, 1, capture);
done = 0;
sent = 0;
statuses.clear();
console.log(`${'row'.padEnd(22)} ${'caps'.padStart(5)} |`);
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
const baseline = samples.find((sample) => sample.captures >= BASELINE_CAPTURE && sample.label === '');
const end = samples.find((sample) => sample.label === 'end');
if (baseline && end) {
  const growth = end.serviceRss / baseline.serviceRss - 1;
  console.log(
    `service RSS from capture ${baseline.captures} to ${end.captures}: ${fmt(baseline.serviceRss / MIB)} -> ${fmt(end.serviceRss / MIB)} MiB, ` +
      `${growth >= 0 ? '+' : ''}${fmt(growth * 100)}% (target <= +10%)`,
  );
}
const recycles = samples.filter((sample) => sample.label.startsWith('after recycle'));
if (recycles.length > 0) {
  console.log(`Chromium PSS right after each recycle: ${recycles.map((sample) => `${fmt(sample.chromiumPss / MIB)} MiB (capture ${sample.captures})`).join(', ')}`);
}
if (left.files > 0) {
  console.error(`FAIL: ${left.files} files left under ${browserRoots.join(' and ')} after the pool closed`);
  process.exit(1);
}
