/**
 * make bench: capture latency and throughput of the service against two floors, in one run, on the
 * same fixture page, measured as a user meets them: the service started as `make run` starts it (its
 * own process: the API with its in-process Chromium pool, the job runner, the result cache and
 * metrics on, the default RENDER_CONCURRENCY and log level), reached over HTTP from this process,
 * and each floor bare puppeteer in a process of its own (bench/support/floor-process.ts), in a
 * Chromium launched with the service's flags:
 * - the isolated floor: a fresh browser context and page per capture, `goto`, `screenshot`, then the
 *   context closed. The service promises the same isolation, so this is the floor it is held to;
 * - the warm floor: `goto` + `screenshot` on a page that is already open and reused, a floor no
 *   isolated capture can reach, held to only when a warm context is waiting (a client pausing
 *   500 ms between captures).
 * Idle background work is measured against the same kind of process without it, to show that it
 * costs the captures nothing: the self-hosted service against one with ASYNC_CAPTURES=false (no job
 * runner), and a hosted service with a page monitor scheduled against one with nothing scheduled.
 * The machine may be loaded by other work, so every comparison is interleaved: throughput (and, at
 * c=1, latency) in alternating blocks per subject, the paused client one capture per subject in
 * turn, and the targets are ratios. BENCH_REMOTE=1 adds the API dispatching to the renderer service
 * in a third process (RENDERER_URL), to show what the HTTP hop costs. BENCH_BASELINE_API=<another
 * tree's services/api/src/main.ts> adds that tree's service, default options, to the rotation: before
 * and after a change, in one run; BENCH_BASELINE_ENV="NAME=value ..." starts the baseline (this tree's
 * service unless BENCH_BASELINE_API names another) with those variables besides the bench's own, to
 * compare a setting. BENCH_CPU_PROF=DIR writes a
 * CPU profile of the self-hosted service process into DIR (node --cpu-prof) for
 * bench/cpu-profile-top.ts. Prints figures and ratios; asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../lib/store/sqlite.ts';
import { closedPort, startFixtureServer } from '../test/support/fixture-server.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../test/support/processes.ts';
import { SERVICE_AS_RUN_ENV, startServiceAsRun } from './support/service-as-run.ts';
import { startFloorProcess, type FloorProcess, type FloorShot } from './support/floor-process.ts';
import { cpuMs } from './support/process-cpu.ts';
import { fmt, median, percentile, runConcurrently, sleep } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const WARMUP = 5;
/** Throughput is measured in this many alternating blocks per subject. */
const BLOCKS = 4;
const GAP_MS = 500;
const CONCURRENCIES = [1, 2, 4] as const;

const fixtures = await startFixtureServer();
const pageUrl = fixtures.url('/simple');
const shot: FloorShot = { url: pageUrl };
const scratch = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-capture-bench-'));

/** Something that takes captures of pageUrl: one timed capture, or a block of them at a concurrency. */
interface Subject {
  name: string;
  /** The process that takes the captures: the service's, or the floor's (its Chromium are its descendants). */
  pid: number;
  capture(worker: number): Promise<number>;
  block(count: number, concurrency: number): Promise<{ durations: number[]; perSecond: number }>;
  close(): Promise<void>;
}

function floorSubject(name: string, floor: FloorProcess): Subject {
  return { name, pid: floor.pid, capture: async (worker) => (await floor.capture(shot, worker)).ms, block: (count, concurrency) => floor.block(count, concurrency, shot), close: () => floor.close() };
}

/** A service process's /screenshot (or /api/screenshot with `key`), POSTed `body` with the page's URL. */
function serviceSubject(name: string, service: ServiceProcess, body: Record<string, unknown>, key?: string): Subject {
  const endpoint = `${service.base}${key ? '/api/screenshot' : '/screenshot'}`;
  const headers = { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) };
  const request = JSON.stringify({ url: pageUrl, ...body });
  const once = async () => {
    const response = await fetch(endpoint, { method: 'POST', headers, body: request });
    if (response.status !== 200) throw new Error(`${name}: capture answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  return {
    name,
    pid: service.child.pid as number,
    async capture() {
      const t0 = performance.now();
      await once();
      return performance.now() - t0;
    },
    block: (count, concurrency) => runConcurrently(count, concurrency, once),
    close: async () => void (await service.stop()),
  };
}

/** The self-hosted service as `make run` starts it (from `main`, another tree's for a baseline), with its own embedded store for the job runner. */
async function startSelfHosted(main = API_MAIN, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const profileDir = main === API_MAIN && Object.keys(env).length === 0 ? process.env.BENCH_CPU_PROF : undefined;
  return startServiceAsRun({ ...(profileDir ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${path.resolve(profileDir)}` } : {}), ...env }, main);
}

/** BENCH_BASELINE_ENV="NAME=value ...": the baseline's environment, besides the bench's own. */
function baselineEnv(): Record<string, string> {
  const pairs = (process.env.BENCH_BASELINE_ENV ?? '').split(/\s+/).filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => {
      const equals = pair.indexOf('=');
      if (equals < 1) throw new Error(`BENCH_BASELINE_ENV: expected NAME=value, got ${pair}`);
      return [pair.slice(0, equals), pair.slice(equals + 1)];
    }),
  );
}

/** Hosted mode on the embedded store in `dataDir`, one site key, and (with `monitor`) a page monitor scheduled but not due. */
async function startHosted(name: string, monitor: boolean): Promise<{ service: ServiceProcess; key: string }> {
  const dataDir = path.join(scratch, name);
  const store = openSqliteStore({ dataDir });
  const account = await store.createAccount({ name: 'bench' });
  const site = await store.createSite({ accountId: account.id, name: 'bench', allowedDomains: [] });
  const { secret: key } = await store.createKey({ accountId: account.id, name: 'client', kind: 'site', siteId: site.id });
  const { secret: admin } = await store.createKey({ accountId: account.id, name: 'admin', kind: 'full' });
  const service = await startServiceAsRun({ MODE: 'hosted', DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '1000000' });
  if (!monitor) return { service, key };
  const created = await fetch(`${service.base}/api/monitors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': admin },
    body: JSON.stringify({ name: 'idle', schedule: '@yearly', pages: [{ name: 'simple', url: pageUrl }] }),
  });
  if (created.status !== 201) throw new Error(`creating the monitor answered ${created.status}: ${await created.text()}`);
  return { service, key };
}

/** The API dispatching to the renderer service in its own process (RENDERER_URL), both as users run them. */
async function startRemote(): Promise<{ api: ServiceProcess; renderer: ServiceProcess }> {
  const renderer = await startServiceProcess(RENDERER_MAIN, SERVICE_AS_RUN_ENV, { port: await closedPort() });
  const api = await startServiceAsRun({ RENDERER_URL: renderer.base });
  return { api, renderer };
}

interface Figures {
  latencies: number[];
  perSecond: Map<number, number>;
  gapLatencies: number[];
  /** CPU ms used during the c=2 blocks: by the Node process alone, and with its Chromium. */
  cpu: { node: number; total: number; captures: number };
}

/**
 * Throughput at `concurrency` (and, at c=1, latency): BLOCKS alternating blocks of SAMPLES / BLOCKS
 * back-to-back captures per subject, so that one subject's background work (a pool making its next
 * spare context) lands on its own next capture, as in real use, not on another subject's.
 */
async function measureBlocks(subjects: Subject[], figures: Map<Subject, Figures>, concurrency: number): Promise<void> {
  const elapsed = new Map<Subject, number>();
  const perBlock = Math.max(concurrency, Math.round(SAMPLES / BLOCKS));
  for (let block = 0; block < BLOCKS; block++) {
    for (let i = 0; i < subjects.length; i++) {
      const subject = subjects[(block + i) % subjects.length] as Subject;
      const cpuBefore = { node: cpuMs(subject.pid), total: cpuMs(subject.pid, { tree: true }) };
      const run = await subject.block(perBlock, concurrency);
      if (concurrency === 2) {
        const cpu = figures.get(subject)?.cpu;
        if (cpu) {
          cpu.node += cpuMs(subject.pid) - cpuBefore.node;
          cpu.total += cpuMs(subject.pid, { tree: true }) - cpuBefore.total;
          cpu.captures += perBlock;
        }
      }
      elapsed.set(subject, (elapsed.get(subject) ?? 0) + perBlock / run.perSecond);
      if (concurrency === 1) figures.get(subject)?.latencies.push(...run.durations);
    }
  }
  for (const subject of subjects) figures.get(subject)?.perSecond.set(concurrency, (BLOCKS * perBlock) / (elapsed.get(subject) as number));
}

/** One client that pauses GAP_MS before each capture, so a warm context is waiting; interleaved too. */
async function measureWithGaps(subjects: Subject[], figures: Map<Subject, Figures>): Promise<void> {
  for (let round = 0; round < Math.ceil(SAMPLES / 2); round++) {
    for (let i = 0; i < subjects.length; i++) {
      const subject = subjects[(round + i) % subjects.length] as Subject;
      await sleep(GAP_MS);
      figures.get(subject)?.gapLatencies.push(await subject.capture(0));
    }
  }
}

console.log(`Viewfinder capture bench: ${SAMPLES} samples per figure, page ${pageUrl}, profile standard, RENDER_CONCURRENCY=${SERVICE_AS_RUN_ENV.RENDER_CONCURRENCY}, ${os.availableParallelism()} CPUs`);
console.log('The service in its own process as `make run` starts it, each floor bare puppeteer in its own process; interleaved: ratios are what to compare.\n');
const isolated = floorSubject('isolated floor (fresh context)', await startFloorProcess({ mode: 'isolated' }));
const warm = floorSubject('warm floor (page reused)', await startFloorProcess({ mode: 'warm', workers: Math.max(...CONCURRENCIES) }));
const selfHosted = await startSelfHosted();
const serviceDefaults = serviceSubject('service, default options', selfHosted, {});
const service = serviceSubject('service, removeAds:false', selfHosted, { removeAds: false });
// Idle background work, each part against the same process without it: the job runner (self-hosted,
// ASYNC_CAPTURES=false has none) and a monitor schedule (hosted, whose job runner always runs).
const withoutRunner = serviceSubject('self-hosted, no job runner', await startServiceAsRun({ ASYNC_CAPTURES: 'false' }), {});
const hostedBare = await startHosted('hosted-bare', false);
const hostedWithout = serviceSubject('hosted, nothing scheduled', hostedBare.service, {}, hostedBare.key);
const hostedMonitor = await startHosted('hosted-monitor', true);
const hostedDefaults = serviceSubject('hosted, monitor scheduled', hostedMonitor.service, {}, hostedMonitor.key);
const baselineMain = process.env.BENCH_BASELINE_API;
const baselineEnvironment = baselineEnv();
const baseline =
  baselineMain || Object.keys(baselineEnvironment).length > 0
    ? serviceSubject('baseline, default options', await startSelfHosted(baselineMain ?? API_MAIN, baselineEnvironment), {})
    : undefined;
const remote = process.env.BENCH_REMOTE === '1' ? await startRemote() : undefined;
const remoteSubject = remote && serviceSubject('API + renderer process', remote.api, { removeAds: false });
const subjects: Subject[] = [isolated, warm, serviceDefaults, service, withoutRunner, hostedWithout, hostedDefaults, ...(baseline ? [baseline] : []), ...(remoteSubject ? [remoteSubject] : [])];
const figures = new Map(subjects.map((subject) => [subject, { latencies: [], perSecond: new Map(), gapLatencies: [], cpu: { node: 0, total: 0, captures: 0 } } as Figures]));
for (const subject of subjects) await runConcurrently(WARMUP, 1, async (worker) => void (await subject.capture(worker)));
for (const concurrency of CONCURRENCIES) await measureBlocks(subjects, figures, concurrency);
await measureWithGaps([warm, serviceDefaults, service, ...(baseline ? [baseline] : [])], figures);
// The self-hosted service's exit writes its CPU profile (BENCH_CPU_PROF); the second subject on it has nothing left to close.
for (const subject of subjects.filter((subject) => subject !== service)) await subject.close();
await remote?.renderer.stop();
rmSync(scratch, { recursive: true, force: true });
await fixtures.close();

const of = (subject: Subject) => figures.get(subject) as Figures;
const rows: string[][] = [['', 'median ms', 'p95 ms', ...CONCURRENCIES.map((c) => `c=${c} /s`), `gap ${GAP_MS}ms`, 'CPU Node ms', 'CPU all ms']];
for (const subject of subjects) {
  const { latencies, perSecond, gapLatencies, cpu } = of(subject);
  rows.push([
    subject.name,
    fmt(median(latencies)),
    fmt(percentile(latencies, 95)),
    ...CONCURRENCIES.map((c) => fmt(perSecond.get(c) as number)),
    gapLatencies.length > 0 ? fmt(median(gapLatencies)) : '-',
    fmt(cpu.node / cpu.captures),
    fmt(cpu.total / cpu.captures),
  ]);
}
for (const row of rows) console.log((row[0] as string).padEnd(34) + row.slice(1).map((cell) => cell.padStart(13)).join(''));
console.log(`median and p95 at c=1; gap ${GAP_MS}ms: the median of one client pausing ${GAP_MS} ms; CPU ms: CPU time per capture in the c=2 blocks, of the Node process that takes the captures, and with its Chromium (all).\n`);
const ratio = (a: number, b: number) => fmt(a / b, 2);
const latencyRatio = (subject: Subject, floor: Subject) => ratio(median(of(subject).latencies), median(of(floor).latencies));
const throughputRatio = (subject: Subject, floor: Subject, c: number) => ratio(of(subject).perSecond.get(c) as number, of(floor).perSecond.get(c) as number);
const gapRatio = (subject: Subject) => ratio(median(of(subject).gapLatencies), median(of(warm).gapLatencies));
console.log('Targets (figures taken in the same run, interleaved):');
console.log(`  default options at c=1, latency / isolated floor (target <= 1.10):             ${latencyRatio(serviceDefaults, isolated)}  (removeAds:false: ${latencyRatio(service, isolated)})`);
console.log(`  default options at c=2, throughput / isolated floor's (target >= 0.95):        ${throughputRatio(serviceDefaults, isolated, 2)}  (removeAds:false: ${throughputRatio(service, isolated, 2)}; at c=4: ${throughputRatio(serviceDefaults, isolated, 4)})`);
console.log(`  default options, one client ${GAP_MS} ms between captures / warm floor (target <= 1.3): ${gapRatio(serviceDefaults)}  (removeAds:false: ${gapRatio(service)})`);
console.log(`  removeAds' cost at c=1 (default options / removeAds:false, target <= 1.15):    ${latencyRatio(serviceDefaults, service)}`);
const idleCost = (subject: Subject, without: Subject) => `c=1 latency ${latencyRatio(subject, without)}, c=2 throughput ${throughputRatio(subject, without, 2)}`;
console.log(`  idle background work / none, default options (target: 1.0 within noise): the job runner ${idleCost(serviceDefaults, withoutRunner)}; a monitor scheduled (hosted) ${idleCost(hostedDefaults, hostedWithout)}`);
console.log(`  for reference: hosted (keys, scopes, usage per capture) / self-hosted: ${idleCost(hostedWithout, serviceDefaults)}`);
console.log(`  for reference: isolated floor / warm floor at c=1: ${latencyRatio(isolated, warm)}, at c=2 throughput: ${throughputRatio(isolated, warm, 2)}`);
if (baseline) {
  console.log(
    `  this tree / baseline, default options: c=1 latency ${latencyRatio(serviceDefaults, baseline)}, c=2 throughput ${throughputRatio(serviceDefaults, baseline, 2)}, ${GAP_MS} ms gaps ${ratio(median(of(serviceDefaults).gapLatencies), median(of(baseline).gapLatencies))} (baseline / floors: c=1 ${latencyRatio(baseline, isolated)}, c=2 ${throughputRatio(baseline, isolated, 2)}, gaps ${gapRatio(baseline)})`,
  );
}
if (remoteSubject) console.log(`  API + renderer process / one process, removeAds:false: median x${latencyRatio(remoteSubject, service)}, throughput at c=2 x${throughputRatio(remoteSubject, service, 2)}`);
if (process.env.BENCH_CPU_PROF) console.log(`\nCPU profile of the self-hosted service: ${path.resolve(process.env.BENCH_CPU_PROF)} (node bench/cpu-profile-top.ts FILE)`);
