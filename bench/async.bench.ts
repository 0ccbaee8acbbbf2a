/**
 * Asynchronous captures against synchronous ones, on one hosted API process with its in-process
 * Chromium pool (RENDER_CONCURRENCY=2) and the embedded store:
 *
 * 1. the same N captures (BENCH_CAPTURES, 500) sent synchronously by 4 clients (POST /api/screenshot);
 * 2. the same N submitted as batches of 100 to POST /api/captures, timed from the first submit to
 *    the last capture's outcome (ASYNC_CAPTURE_SHARE_PERCENT=100 here, so that both use every slot);
 * 3. the API process's RSS while BENCH_WAITING (10,000) jobs wait in the queue.
 *
 * Every capture is a distinct URL of a loopback fixture page, so nothing is cached.
 * Run: node bench/async.bench.ts
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../lib/store/sqlite.ts';
import { closedPort, startFixtureServer } from '../test/support/fixture-server.ts';
import { API_MAIN, startServiceProcess } from '../test/support/processes.ts';
import { fmt, median, percentile, runConcurrently, sleep } from './stats.ts';

const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 500);
const WAITING = Number(process.env.BENCH_WAITING ?? 10_000);
const BATCH = 100;
const CLIENTS = 4;

const fixtures = await startFixtureServer();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-async-bench-'));
const store = openSqliteStore({ dataDir });
const account = await store.createAccount({ name: 'bench' });
const site = await store.createSite({ accountId: account.id, name: 'bench', allowedDomains: [] });
const { secret: key } = await store.createKey({ accountId: account.id, name: 'bench', kind: 'site', siteId: site.id });

const port = await closedPort();
const api = await startServiceProcess(
  API_MAIN,
  {
    MODE: 'hosted',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    RENDER_CONCURRENCY: '2',
    RATE_LIMIT_PER_MINUTE: '1000000',
    ASYNC_MAX_QUEUED_PER_ACCOUNT: String(WAITING + CAPTURES),
    ASYNC_CAPTURE_SHARE_PERCENT: '100',
    JOB_POLL_INTERVAL_MS: '100',
  },
  { port },
);
const pid = api.child.pid as number;
const rssMiB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const post = (route: string, body: object) =>
  fetch(`${api.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
const url = (phase: string, i: number) => fixtures.url(`/geometry?${phase}=${i}`);

console.log(`Asynchronous captures bench: ${CAPTURES} captures, 1 API process with in-process Chromium (RENDER_CONCURRENCY=2), ${os.cpus().length} CPUs`);
console.log('(a shared machine: other work may run at the same time; compare the two rows of one run, not runs of different days)\n');

// Warm-up: the pool's first captures are slower.
await runConcurrently(8, 2, async () => void (await post('/api/screenshot', { url: url('warm', Math.random()) })).arrayBuffer());

// 1. Synchronous, 4 clients.
let next = 0;
let failures = 0;
const sync = await runConcurrently(CAPTURES, CLIENTS, async () => {
  const response = await post('/api/screenshot', { url: url('sync', next++) });
  await response.arrayBuffer();
  if (response.status !== 200) failures++;
});
console.log(
  `synchronous, ${CLIENTS} clients: ${fmt(sync.perSecond, 2)} captures/s; latency p50 ${fmt(median(sync.durations) / 1000, 2)} s, p95 ${fmt(percentile(sync.durations, 95) / 1000, 2)} s; ${failures} not 200`,
);

// 2. Asynchronous: batches of 100, then wait for every outcome.
const begin = performance.now();
const submitTimes: number[] = [];
for (let start = 0; start < CAPTURES; start += BATCH) {
  const t0 = performance.now();
  const response = await post('/api/captures', { captures: Array.from({ length: Math.min(BATCH, CAPTURES - start) }, (_, i) => ({ url: url('async', start + i) })) });
  await response.arrayBuffer();
  if (response.status !== 202) throw new Error(`submit answered ${response.status}`);
  submitTimes.push(performance.now() - t0);
}
const submitted = performance.now();
for (;;) {
  const done = await store.countJobs({ ownerId: account.id, type: 'capture', states: ['succeeded', 'failed'] });
  if (done >= CAPTURES) break;
  await sleep(200);
}
const elapsedS = (performance.now() - begin) / 1000;
const failed = await store.countJobs({ ownerId: account.id, type: 'capture', states: ['failed'] });
console.log(
  `asynchronous, ${Math.ceil(CAPTURES / BATCH)} batches of up to ${BATCH}: ${fmt(CAPTURES / elapsedS, 2)} captures/s from the first submit to the last outcome; ` +
    `all ${CAPTURES} accepted in ${fmt((submitted - begin) / 1000, 2)} s (p50 ${fmt(median(submitTimes), 0)} ms per batch of ${BATCH}); ${failed} failed`,
);

// 3. RSS while many jobs wait.
const before = rssMiB();
for (let start = 0; start < WAITING; start += BATCH) {
  const response = await post('/api/captures', { captures: Array.from({ length: BATCH }, (_, i) => ({ url: url('wait', start + i) })) });
  await response.arrayBuffer();
  if (response.status !== 202) throw new Error(`submit answered ${response.status}`);
}
await sleep(2000);
const waiting = await store.countJobs({ ownerId: account.id, type: 'capture', states: ['queued'] });
const samples: number[] = [];
for (let i = 0; i < 10; i++) {
  samples.push(rssMiB());
  await sleep(1000);
}
console.log(
  `API process RSS: ${fmt(before, 0)} MiB before; ${fmt(median(samples), 0)} MiB (max ${fmt(Math.max(...samples), 0)}) over 10 s while ${waiting} jobs wait ` +
    `(Chromium's own processes not included)`,
);

await api.stop(5000);
await store.close();
await fixtures.close();
rmSync(dataDir, { recursive: true, force: true });
