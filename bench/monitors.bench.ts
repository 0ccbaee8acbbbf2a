/**
 * What page monitors cost, on one hosted API process and one renderer process (real Chromium) with
 * the default RENDER_CONCURRENCY (one slot per core; BENCH_CAPACITY), the embedded store and the
 * default MONITOR_SLOT_SHARE (25: at least one slot, and never the last free one):
 *
 * 1. interactive latency (p50, p95) and the 429s of clients calling POST /api/screenshot back to
 *    back, in interleaved rounds: without monitors, then while a 20-page monitor runs again and
 *    again. Twice: half as many clients as slots (slots to spare: monitor captures take one) and as
 *    many as slots (every slot busy: monitor captures wait for a gap). Printed as each condition's figures and their ratios; the goal is
 *    "unchanged within noise";
 * 2. the memory one run of 20 full pages adds (a run that compares each with its baseline): the
 *    API's RSS and the renderer's (its process and Chromium's, RSS and PSS), sampled every 100 ms
 *    during the run, against the idle figures just before.
 *
 * Every capture is of a loopback fixture page. Nothing here asserts on time: it prints.
 * Then a lone client pausing BENCH_PAUSES ms (a list) after each answer, BENCH_PAUSED_CAPTURES per round.
 * Run: node bench/monitors.bench.ts (BENCH_ROUNDS, BENCH_CAPTURES per round and condition, BENCH_CAPACITY, BENCH_CLIENTS: a list).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../lib/store/sqlite.ts';
import { processTree, pssOf, rssOf } from '../services/renderer/src/process-memory.ts';
import { closedPort, startFixtureServer } from '../test/support/fixture-server.ts';
import { startLoggingPages } from '../test/support/logging-pages.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess } from '../test/support/processes.ts';
import { fmt, median, percentile, runConcurrently, sleep } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 30);
// The default RENDER_CONCURRENCY: one slot per core (docs/configuration.md).
const CAPACITY = Number(process.env.BENCH_CAPACITY ?? os.cpus().length);
const CLIENTS = (process.env.BENCH_CLIENTS ?? `${Math.max(1, CAPACITY / 2)},${CAPACITY}`).split(',').map(Number);
const PAUSES = (process.env.BENCH_PAUSES ?? '500,1500').split(',').filter(Boolean).map(Number);
const PAUSED_CAPTURES = Number(process.env.BENCH_PAUSED_CAPTURES ?? 10);
const PAGES = 20;
const MIB = 1024 * 1024;

const fixtures = await startFixtureServer();
// The load monitor's pages, logged, to count what it captured while the clients ran.
const monitorPages = await startLoggingPages();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-monitors-bench-'));
const store = openSqliteStore({ dataDir });
const account = await store.createAccount({ name: 'bench' });
const site = await store.createSite({ accountId: account.id, name: 'bench', allowedDomains: [] });
const { secret: siteKey } = await store.createKey({ accountId: account.id, name: 'client', kind: 'site', siteId: site.id });
const { secret: fullKey } = await store.createKey({ accountId: account.id, name: 'admin', kind: 'full' });

// Quiet logs: the ports are chosen here, since no "Listening" line will say them.
const renderer = await startServiceProcess(RENDERER_MAIN, { LOG_LEVEL: 'warn', RENDER_CONCURRENCY: String(CAPACITY) }, { port: await closedPort() });
const api = await startServiceProcess(API_MAIN, {
  MODE: 'hosted',
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  RENDERER_URL: renderer.base,
  RATE_LIMIT_PER_MINUTE: '1000000',
  JOB_POLL_INTERVAL_MS: '100',
}, { port: await closedPort() });
const post = (route: string, body: object | undefined, key: string) =>
  fetch(`${api.base}${route}`, { method: 'POST', headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });

async function createMonitor(name: string, fullPage: boolean): Promise<string> {
  const pages = Array.from({ length: PAGES }, (_, i) => ({ name: `p${i}`, url: fullPage ? fixtures.url(`/tall?height=${2000 + 100 * i}`) : monitorPages.url(`p${i}`), fullPage, removeAds: false }));
  const response = await post('/api/monitors', { name, schedule: '@yearly', pages }, fullKey);
  const body = (await response.json()) as { id?: string; error?: string };
  if (response.status !== 201 || !body.id) throw new Error(`creating the monitor answered ${response.status}: ${body.error}`);
  return body.id;
}
/** Queues a run now and resolves once its job is done; answers the pages it captured. */
async function runOnce(monitorId: string): Promise<number> {
  const response = await post(`/api/monitors/${monitorId}/runs`, undefined, fullKey);
  const { jobId } = (await response.json()) as { jobId: string };
  for (;;) {
    const job = await store.getJob(jobId);
    if (job?.state === 'succeeded' || job?.state === 'failed') break;
    await sleep(100);
  }
  const [run] = await store.listMonitorRuns(monitorId, 1);
  return run?.pages.filter((page) => page.outcome !== 'failed').length ?? 0;
}

console.log(`Page monitors bench: 1 API process, 1 renderer process (RENDER_CONCURRENCY=${CAPACITY}, MONITOR_SLOT_SHARE=25), ${os.cpus().length} CPUs`);
console.log('(a shared machine: other work may run at the same time; compare the rows of one run, not runs of different days)\n');

// 1. Interactive latency with and without monitors, interleaved.
const loaded = await createMonitor('load', false);
let next = 0;
const capture = async (durations: number[], statuses: Map<number, number>) => {
  const t0 = performance.now();
  const response = await post('/api/screenshot', { url: fixtures.url(`/simple?client=${next++}`), removeAds: false }, siteKey);
  await response.arrayBuffer();
  durations.push(performance.now() - t0);
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
};
// Warm-up: Chromium's first captures are slower, and the monitor's first run takes the baselines.
await runConcurrently(8, 2, () => capture([], new Map()));
await runOnce(loaded);

const monitorPageLoadsBetween = (begin: number, end: number) =>
  Array.from({ length: PAGES }, (_, i) => monitorPages.requests(`p${i}`).filter((load) => load.start >= begin && load.start < end).length).reduce((a, b) => a + b, 0);

/**
 * Interleaved rounds for `clients` clients, each pausing `pauseMs` after every answer (0: back to
 * back); prints each condition and the ratios.
 */
async function interactive(clients: number, pauseMs = 0, captures = CAPTURES): Promise<void> {
  const conditions = {
    without: { durations: [] as number[], statuses: new Map<number, number>(), monitorLoads: 0 },
    with: { durations: [] as number[], statuses: new Map<number, number>(), monitorLoads: 0 },
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
      const condition = conditions[name];
      let clientsDone = false;
      // While the clients run, the monitor runs back to back (its captures within its share of slots);
      // the run in flight when they finish ends before the next round starts.
      const monitorLoop = (async () => {
        while (name === 'with' && !clientsDone) await runOnce(loaded);
      })();
      const begin = Date.now();
      await runConcurrently(captures, clients, async () => {
        await capture(condition.durations, condition.statuses);
        if (pauseMs > 0) await sleep(pauseMs);
      });
      const end = Date.now();
      clientsDone = true;
      await monitorLoop;
      condition.monitorLoads += monitorPageLoadsBetween(begin, end);
    }
  }
  const summary = (name: keyof typeof conditions) => {
    const { durations, statuses, monitorLoads } = conditions[name];
    const others = [...statuses].filter(([status]) => status !== 200 && status !== 429).map(([status, count]) => `${count}x${status}`);
    const line =
      `${durations.length} captures, p50 ${fmt(median(durations), 0)} ms, p95 ${fmt(percentile(durations, 95), 0)} ms, 429s ${statuses.get(429) ?? 0}` +
      `${others.length ? `, other non-200: ${others.join(', ')}` : ''}; monitor page loads meanwhile: ${monitorLoads}`;
    return { p50: median(durations), p95: percentile(durations, 95), n429: statuses.get(429) ?? 0, line };
  };
  const without = summary('without');
  const withMonitors = summary('with');
  const pace = pauseMs > 0 ? `pausing ${pauseMs} ms after each answer` : 'back to back';
  console.log(`${clients} clients ${pace} on POST /api/screenshot (${CAPACITY} slots), ${ROUNDS} interleaved rounds of ${captures} captures per condition:`);
  console.log(`  without monitors: ${without.line}`);
  console.log(`  with monitors:    ${withMonitors.line}`);
  console.log(`  ratio with/without: p50 ${fmt(withMonitors.p50 / without.p50, 2)}, p95 ${fmt(withMonitors.p95 / without.p95, 2)}; 429s ${withMonitors.n429} vs ${without.n429}\n`);
}
for (const clients of CLIENTS) await interactive(clients);
// A lone client that pauses: the tier is idle between its captures, which is when monitors run.
for (const pauseMs of PAUSES) await interactive(1, pauseMs, PAUSED_CAPTURES);

// 2. The memory a run of 20 full pages adds.
const full = await createMonitor('full-pages', true);
// Its first run only takes the baselines; the run measured is the second, which compares every page.
await runOnce(full);
const rendererPid = renderer.child.pid as number;
const apiPid = api.child.pid as number;
const memory = () => {
  const tree = processTree(rendererPid) ?? [rendererPid];
  return { api: rssOf(apiPid), rendererRss: tree.reduce((sum, pid) => sum + rssOf(pid), 0), rendererPss: tree.reduce((sum, pid) => sum + pssOf(pid), 0) };
};
await sleep(3000);
const idle = memory();
const peak = { ...idle };
let running = true;
const sampler = (async () => {
  while (running) {
    const now = memory();
    peak.api = Math.max(peak.api, now.api);
    peak.rendererRss = Math.max(peak.rendererRss, now.rendererRss);
    peak.rendererPss = Math.max(peak.rendererPss, now.rendererPss);
    await sleep(100);
  }
})();
const t0 = performance.now();
const captured = await runOnce(full);
const runSeconds = (performance.now() - t0) / 1000;
running = false;
await sampler;
await sleep(3000);
const settled = memory();
const [run] = await store.listMonitorRuns(full, 1);
const outcomes = run?.pages.map((page) => page.outcome) ?? [];
const mib = (bytes: number) => fmt(bytes / MIB, 0);
console.log(`One run of ${PAGES} full pages (2000 to ${2000 + 100 * (PAGES - 1)} CSS px tall; ${captured} captured, outcomes: ${[...new Set(outcomes)].join(', ')}) in ${fmt(runSeconds, 1)} s:`);
console.log(`  API RSS:                 idle ${mib(idle.api)} MiB, peak ${mib(peak.api)} MiB (+${mib(peak.api - idle.api)}), 3 s after ${mib(settled.api)} MiB (+${mib(settled.api - idle.api)})`);
console.log(`  renderer + Chromium RSS: idle ${mib(idle.rendererRss)} MiB, peak ${mib(peak.rendererRss)} MiB (+${mib(peak.rendererRss - idle.rendererRss)}), 3 s after ${mib(settled.rendererRss)} MiB (+${mib(settled.rendererRss - idle.rendererRss)})`);
console.log(`  renderer + Chromium PSS: idle ${mib(idle.rendererPss)} MiB, peak ${mib(peak.rendererPss)} MiB (+${mib(peak.rendererPss - idle.rendererPss)}), 3 s after ${mib(settled.rendererPss)} MiB (+${mib(settled.rendererPss - idle.rendererPss)})`);

await api.stop(5000);
await renderer.stop(5000);
await store.close();
await fixtures.close();
await monitorPages.close();
rmSync(dataDir, { recursive: true, force: true });
