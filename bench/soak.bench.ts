/**
 * make bench-soak: many captures in a row through the HTTP API of the service as `make run` starts
 * it, in its own process: services/api/src/main.ts in self-hosted mode with its in-process Chromium
 * pool and every background part on as by default (the job runner for asynchronous captures on the
 * embedded store in a throwaway DATA_DIR, the result cache, metrics). SOAK_CAPTURES (default 2000)
 * captures at SOAK_CONCURRENCY (default RENDER_CONCURRENCY or 2), printing at the start, every
 * tenth of the way, right after each browser recycle and at the end: the service's resident memory
 * (/proc) and V8 heap (its /metrics), the RSS and summed PSS of its Chromium processes (its
 * descendants), and the file count and size of the renderer's temp directories and of the
 * service's whole TMPDIR (a fresh directory of its own). Then the service's RSS growth from
 * capture 200 to the end (target <= 10%) and Chromium's PSS right after each recycle. After the
 * service has shut down, its temp root must be empty. Prints figures; asserts nothing but that.
 *
 * SOAK_HEAP_SNAPSHOTS=200,800,1600 also writes a V8 heap snapshot of the service after those
 * captures (into SOAK_HEAP_DIR, default TMPDIR), for bench/heap-compare.ts: the service runs with
 * --heapsnapshot-signal=SIGUSR2 and the soak signals it. Writing one stalls the service for seconds
 * and leaves its own memory behind, so the memory figures of such a run are not the ones to quote.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadApiConfig } from '../services/api/src/config.ts';
import { processTree, pssOf, rssOf } from '../services/renderer/src/process-memory.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { TEST_ENV } from '../test/support/harness.ts';
import { API_MAIN } from '../test/support/processes.ts';
import { SERVICE_AS_RUN_ENV, startServiceAsRun } from './support/service-as-run.ts';
import { fmt, median, percentile, runConcurrently, sleep } from './stats.ts';

const CAPTURES = Number(process.env.SOAK_CAPTURES ?? 2000);
const MIB = 1024 * 1024;
/** The capture from which growth is measured: by then every code path has run and been compiled. */
const BASELINE_CAPTURE = 200;
const HEAP_SNAPSHOTS = new Set((process.env.SOAK_HEAP_SNAPSHOTS ?? '').split(',').filter(Boolean).map(Number));
const HEAP_DIR = path.resolve(process.env.SOAK_HEAP_DIR ?? os.tmpdir());
if (HEAP_SNAPSHOTS.size > 0) fs.mkdirSync(HEAP_DIR, { recursive: true });

// The service's own TMPDIR, so that everything it and its browsers leave there is counted and removed here.
const serviceTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'viewfinder-soak-tmp-'));
// The young generation's cap (NODE_OPTIONS, as the Makefile and the Dockerfile set it) passes to the service.
const nodeOptions = [process.env.NODE_OPTIONS ?? '', ...(HEAP_SNAPSHOTS.size > 0 ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_DIR}`] : [])].join(' ').trim();
const serviceEnv: Record<string, string> = {
  MODE: 'self-hosted',
  TMPDIR: serviceTmp,
  // Where the service puts its browsers' files by default under that TMPDIR, named so that this process reads the same place.
  RENDERER_TEMP_DIR: process.env.RENDERER_TEMP_DIR ?? path.join(serviceTmp, 'viewfinder-renderer'),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
};
// What the service reads, read the same way here: where its browsers keep their files, its pool's size.
const config = loadApiConfig({ ...process.env, ...TEST_ENV, ...SERVICE_AS_RUN_ENV, ...serviceEnv });
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? config.renderer.concurrency);

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

/** Chromium-named leftovers loose in the service's TMPDIR: what a leaking service would pile up there. */
function looseChromiumEntries(): number {
  return fs.readdirSync(serviceTmp).filter((name) => /^(puppeteer_dev_|\.org\.chromium\.|\.com\.google\.Chrome)/.test(name)).length;
}

function readProc(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The service's Chromium browser processes (its direct children), by pid: a new pid is a new browser. */
function browserPids(pid: number): number[] {
  const tasks = (() => {
    try {
      return fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      return [];
    }
  })();
  const children = tasks.flatMap((task) => readProc(`/proc/${pid}/task/${task}/children`).split(' ').filter(Boolean).map(Number));
  return children.filter((child) => /chrom/i.test(readProc(`/proc/${child}/comm`)));
}

/** The service's metrics, by name with its labels as written (`name{label="value"}`). */
async function scrapeMetrics(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const metrics = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) metrics.set(match[1] as string, Number(match[2]));
  }
  return metrics;
}

interface Sample {
  label: string;
  captures: number;
  serviceRss: number;
  chromiumPss: number;
}
const samples: Sample[] = [];

const fixtures = await startFixtureServer();
const service = await startServiceAsRun(serviceEnv);
const servicePid = service.child.pid as number;
// Should the soak itself fail, the service still shuts down (and closes its browsers) rather than outlive it.
process.on('exit', () => service.child.kill('SIGTERM'));
const endpoint = `${service.base}/screenshot`;

async function report(label: string, captures = done): Promise<void> {
  const running = service.child.exitCode === null && service.child.signalCode === null;
  const metrics = running ? await scrapeMetrics(service.base) : new Map<string, number>();
  const metric = (name: string) => metrics.get(`viewfinder_${name}`) ?? 0;
  const serviceRss = rssOf(servicePid);
  // Anonymous memory (V8's heap, malloc's arenas) apart from mapped files (the binary's and libraries' pages touched).
  const status = readProc(`/proc/${servicePid}/status`);
  const statusKib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  const chromium = running ? (processTree(servicePid) ?? []).filter((pid) => pid !== servicePid) : [];
  const chromiumRss = chromium.reduce((sum, pid) => sum + rssOf(pid), 0);
  const chromiumPss = chromium.reduce((sum, pid) => sum + pssOf(pid), 0);
  const renderer = treeOf(config.renderer.tempRoot);
  const tmp = treeOf(serviceTmp);
  samples.push({ label, captures, serviceRss, chromiumPss });
  console.log(
    `${label.padEnd(22)} ${String(captures).padStart(5)} | service RSS ${fmt(serviceRss / MIB).padStart(6)} MiB (anon ${fmt(statusKib('RssAnon') / MIB).padStart(6)}, file ${fmt(statusKib('RssFile') / MIB).padStart(5)}), heap ${fmt(metric('nodejs_heap_size_used_bytes') / MIB).padStart(5)} of ${fmt(metric('nodejs_heap_size_total_bytes') / MIB).padStart(5)} MiB (young ${fmt(metric('nodejs_heap_space_size_total_bytes{space="new"}') / MIB).padStart(5)}, old ${fmt(metric('nodejs_heap_space_size_total_bytes{space="old"}') / MIB).padStart(5)}), external ${fmt(metric('nodejs_external_memory_bytes') / MIB).padStart(5)} MiB | ` +
      `Chromium ${String(chromium.length).padStart(2)} procs, RSS ${fmt(chromiumRss / MIB).padStart(6)} MiB, PSS ${fmt(chromiumPss / MIB).padStart(6)} MiB | ` +
      `renderer temp ${String(renderer.files).padStart(4)} files ${fmt(renderer.bytes / MIB).padStart(5)} MiB | ` +
      `TMPDIR ${String(tmp.files).padStart(5)} files ${fmt(tmp.bytes / MIB).padStart(6)} MiB, ${looseChromiumEntries()} loose Chromium entries`,
  );
}

/**
 * Signals the service to write a heap snapshot and waits until it is whole. Node opens the file and
 * writes it on the service's main thread, so once the file exists, the service's next answer comes
 * after the last byte.
 */
async function writeHeapSnapshot(captures: number): Promise<string> {
  const ours = (name: string) => name.startsWith('Heap.') && name.includes(`.${servicePid}.`) && name.endsWith('.heapsnapshot');
  const before = new Set(fs.readdirSync(HEAP_DIR).filter(ours));
  service.child.kill('SIGUSR2');
  let written: string | undefined;
  for (const deadline = performance.now() + 120_000; !written; await sleep(100)) {
    if (performance.now() > deadline) throw new Error(`the service wrote no heap snapshot into ${HEAP_DIR}`);
    written = fs.readdirSync(HEAP_DIR).find((name) => ours(name) && !before.has(name));
  }
  await fetch(`${service.base}/healthz`, { signal: AbortSignal.timeout(300_000) });
  const file = path.join(HEAP_DIR, `viewfinder-soak-${servicePid}-${captures}.heapsnapshot`);
  fs.renameSync(path.join(HEAP_DIR, written), file);
  return file;
}

// A mix that exercises every profile, full page and waits, on four pages of different weight.
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
let recycles = 0;
let warmingUp = true;
/** The service's RSS right after each capture, for medians over a window: one reading moves with V8's young generation. */
const rssAfter: number[] = [];
const browsersSeen = new Set<number>();
const noteBrowsers = () => {
  const fresh = browserPids(servicePid).filter((pid) => !browsersSeen.has(pid));
  for (const pid of fresh) browsersSeen.add(pid);
  return fresh.length;
};
const capture = async () => {
  const body = bodies[sent++ % bodies.length];
  const response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  done += 1;
  if (warmingUp) return void noteBrowsers();
  rssAfter[done] = rssOf(servicePid);
  // A browser the service had not run before is a recycle (or a crash's replacement; the totals follow at the end).
  if (noteBrowsers() > 0) {
    recycles += 1;
    await report(`after recycle ${recycles}`);
  } else if (done % Math.max(1, Math.floor(CAPTURES / 10)) === 0 && done < CAPTURES) await report('');
  if (HEAP_SNAPSHOTS.has(done)) console.log(`heap snapshot after ${done} captures: ${await writeHeapSnapshot(done)}`);
};

console.log(`Viewfinder soak: ${CAPTURES} captures at concurrency ${CONCURRENCY}, pool of ${config.renderer.concurrency}, recycle after ${config.renderer.recycleAfterCaptures}`);
console.log(`service: ${path.relative(process.cwd(), API_MAIN)}, pid ${servicePid}, self-hosted, a throwaway DATA_DIR`);
console.log(`renderer temp root: ${config.renderer.tempRoot}; the service's TMPDIR: ${serviceTmp}`);
// The service's young generation and glibc's mmap threshold are set where it is deployed (Dockerfile, Makefile); the figures hold only with the same settings.
console.log(`Node ${process.version}, the service's NODE_OPTIONS: ${nodeOptions || 'none'}, MALLOC_MMAP_THRESHOLD_: ${process.env.MALLOC_MMAP_THRESHOLD_ ?? "none (glibc's dynamic threshold)"}\n`);
noteBrowsers();
await runConcurrently(3, 1, capture);
warmingUp = false;
done = 0;
sent = 0;
recycles = 0;
statuses.clear();
console.log(`${'row'.padEnd(22)} ${'caps'.padStart(5)} |`);
await report('start');
const run = await runConcurrently(CAPTURES, CONCURRENCY, capture);
await report('end');

const finalMetrics = await scrapeMetrics(service.base);
const exitCode = await service.stop(60_000);
await fixtures.close();
await report('after close');
// Chromium's TMPDIR may live in a short runtime root of its own (docs/safety.md, "Where the browsers keep their files").
const browserRoots = [...new Set([config.renderer.tempRoot, config.renderer.runtimeRoot])];
const left = { files: browserRoots.reduce((files, root) => files + treeOf(root).files, 0) };

console.log('');
console.log(`statuses: ${[...statuses].map(([status, count]) => `${status} x${count}`).join(', ')}`);
console.log(`latency median ${fmt(median(run.durations))} ms, p95 ${fmt(percentile(run.durations, 95))} ms, ${fmt(run.perSecond)} captures/s`);
console.log(
  `browser restarts ${finalMetrics.get('viewfinder_browser_restarts_total') ?? '?'}, crashes ${finalMetrics.get('viewfinder_browser_crashes_total') ?? '?'} (the service's totals, warm-up included); service exited ${exitCode}`,
);
const baseline = samples.find((sample) => sample.captures >= BASELINE_CAPTURE && sample.label === '');
const end = samples.find((sample) => sample.label === 'end');
if (baseline && end) {
  const growth = end.serviceRss / baseline.serviceRss - 1;
  console.log(
    `service RSS at capture ${baseline.captures} and at ${end.captures}, one reading each: ${fmt(baseline.serviceRss / MIB)} -> ${fmt(end.serviceRss / MIB)} MiB, ` +
      `${growth >= 0 ? '+' : ''}${fmt(growth * 100)}% (where each lands on the collector's saw: see below)`,
  );
}
// One reading lands anywhere on the garbage collector's saw: between two of V8's major collections the
// service's RSS climbs by what captures leave for the old generation (its growth step, 16 MiB or more,
// and the image buffers its garbage holds), then falls back, and V8 halves its young generation now and
// then: tens of MiB either way, every few hundred captures. So the growth is read from the RSS after
// every capture over the first and the last stretch of 600 (a third of the captures after capture 200):
// their medians give the level, their 10th and 90th percentiles the saw's lows and highs.
const SPAN = Math.max(100, Math.floor((CAPTURES - BASELINE_CAPTURE) / 3));
if (CAPTURES >= BASELINE_CAPTURE + 2 * SPAN) {
  const stretch = (from: number, to: number) => {
    const readings = rssAfter.slice(from, to + 1).filter((rss) => rss > 0);
    return { from, to, low: percentile(readings, 10), median: median(readings), high: percentile(readings, 90) };
  };
  const [first, last] = [stretch(BASELINE_CAPTURE, BASELINE_CAPTURE + SPAN - 1), stretch(CAPTURES - SPAN + 1, CAPTURES)];
  const change = (before: number, after: number) => `${fmt(before / MIB)} -> ${fmt(after / MIB)} MiB (${after >= before ? '+' : ''}${fmt((after / before - 1) * 100)}%)`;
  console.log(
    `service RSS after each capture, captures ${first.from}-${first.to} against ${last.from}-${last.to}: ` +
      `median ${change(first.median, last.median)} (target <= +10%); 10th percentile ${change(first.low, last.low)}, 90th ${change(first.high, last.high)}`,
  );
}
const afterRecycles = samples.filter((sample) => sample.label.startsWith('after recycle'));
if (afterRecycles.length > 0) {
  console.log(`Chromium PSS right after each recycle: ${afterRecycles.map((sample) => `${fmt(sample.chromiumPss / MIB)} MiB (capture ${sample.captures})`).join(', ')}`);
}
const leftover = service.output().trim();
if (leftover) console.log(`\nthe service's log (LOG_LEVEL=${serviceEnv.LOG_LEVEL}):\n${leftover}`);
if (left.files > 0) {
  console.error(`FAIL: ${left.files} files left under ${browserRoots.join(' and ')} after the service shut down`);
  process.exit(1);
}
fs.rmSync(serviceTmp, { recursive: true, force: true });
