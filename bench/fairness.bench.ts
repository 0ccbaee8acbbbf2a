/**
 * Fairness of the one job runner across accounts: two API "replicas" (two job runners, each with
 * its own store connection) on one embedded store, JOB_CONCURRENCY 4 each. Account "quiet" submits
 * BENCH_PROBES captures one after another, first on an idle runner, then while account "flood" has
 * BENCH_FLOOD (1000) captures queued. Each job is a short slow job (BENCH_JOB_MS, 50 ms of waiting),
 * so the run ends in about a minute. The quiet account's latency (enqueue to outcome written)
 * under the flood should stay within 2x its idle latency.
 *
 * Run: node bench/fairness.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createJobRunner, type JobEvent, type JobRunner } from '../lib/jobs/runner.ts';
import { createLogger } from '../lib/logger.ts';
import { openSqliteStore } from '../lib/store/sqlite.ts';
import { fmt, median, percentile, sleep } from './stats.ts';

const FLOOD = Number(process.env.BENCH_FLOOD ?? 1000);
const PROBES = Number(process.env.BENCH_PROBES ?? 20);
const JOB_MS = Number(process.env.BENCH_JOB_MS ?? 50);
const CONCURRENCY = 4;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-fairness-bench-'));
const stores = [openSqliteStore({ dataDir }), openSqliteStore({ dataDir })];
const logger = createLogger({ level: 'silent' });
const finished = new Map<string, () => void>();
const onEvent = (event: JobEvent) => {
  if (event.kind === 'succeeded') finished.get(event.job.id)?.();
};
const runners: JobRunner[] = stores.map((store, i) => {
  const runner = createJobRunner({ store, logger, concurrency: CONCURRENCY, leaseMs: 30_000, pollIntervalMs: 100, workerId: `replica-${i}`, onEvent });
  runner.register({
    type: 'capture',
    retry: { maxAttempts: 1, baseDelayMs: 1000, maxDelayMs: 1000 },
    retentionMs: 60_000,
    async run() {
      await sleep(JOB_MS);
      return { result: null };
    },
  });
  runner.start();
  return runner;
});

/** Enqueued on one replica (alternating, as a load balancer would), timed until its outcome is written. */
let next = 0;
async function probe(): Promise<number> {
  const runner = runners[next++ % runners.length] as JobRunner;
  const started = performance.now();
  let done!: () => void;
  const written = new Promise<void>((resolve) => (done = resolve));
  const { job } = await runner.enqueue('capture', 'account-quiet', {});
  finished.set(job.id, done);
  await written;
  finished.delete(job.id);
  return performance.now() - started;
}

async function probes(): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < PROBES; i++) {
    latencies.push(await probe());
    await sleep(JOB_MS);
  }
  return latencies;
}

console.log(`Fairness bench: 2 runners on one embedded store, ${CONCURRENCY} slots each, jobs of ${JOB_MS} ms, ${PROBES} probes`);
const idle = await probes();
// The flood is kept at FLOOD queued jobs for the whole measurement, as a hostile account would.
const flooder = runners[0] as JobRunner;
let flooding = true;
let floodSubmitted = 0;
const topUp = async () => {
  const queued = await stores[0]!.countJobs({ ownerId: 'account-flood', states: ['queued'] });
  for (let i = queued; i < FLOOD; i++) await flooder.enqueue('capture', 'account-flood', { i: floodSubmitted++ });
};
await topUp();
const keepFlooding = (async () => {
  while (flooding) {
    await sleep(100);
    await topUp();
  }
})();
const flooded = await probes();
flooding = false;
await keepFlooding;
console.log(`flood: one account kept ${FLOOD} jobs queued (${floodSubmitted} submitted in all)`);
const row = (name: string, values: number[]) => console.log(`${name.padEnd(22)} p50 ${fmt(median(values), 0).padStart(6)} ms   p95 ${fmt(percentile(values, 95), 0).padStart(6)} ms   max ${fmt(Math.max(...values), 0).padStart(6)} ms`);
row('quiet account, idle', idle);
row('quiet account, flood', flooded);
console.log(`ratio of medians: ${fmt(median(flooded) / median(idle), 2)}x (the goal: at most 2x)`);

await Promise.all(runners.map((runner) => runner.stop(100)));
await Promise.all(stores.map((store) => store.close()));
rmSync(dataDir, { recursive: true, force: true });
