/**
 * make bench: capture latency and throughput of the service against two floors, in one run, on the
 * same fixture page, in a Chromium launched with the same flags:
 * - the isolated floor: bare puppeteer with what isolation costs, a fresh browser context and page
 *   per capture, `goto`, `screenshot`, then the context closed. The service promises the same
 *   isolation, so this is the floor it is held to;
 * - the warm floor: `goto` + `screenshot` on a page that is already open and reused, a floor no
 *   isolated capture can reach, held to only when a warm context is waiting (a client pausing
 *   500 ms between captures).
 * The machine may be loaded by other work, so every comparison is interleaved: latency samples go
 * round the subjects one capture at a time, throughput in alternating blocks, and the targets are
 * ratios. The remote row sends the same captures through the renderer service in its own process
 * (RENDERER_URL), to show what the HTTP hop costs. Prints figures and ratios; asserts nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { createLogger, type Logger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { chromiumLaunchOptions, createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { createRemoteRenderer } from '../services/api/src/remote-renderer.ts';
import type { Renderer } from '../services/renderer/src/renderer.ts';
import { closedPort, startFixtureServer } from '../test/support/fixture-server.ts';
import { RENDERER_MAIN, startServiceProcess } from '../test/support/processes.ts';
import { fmt, median, percentile, runConcurrently, sleep } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const WARMUP = 5;
/** Throughput is measured in this many alternating blocks per subject. */
const BLOCKS = 4;
const GAP_MS = 500;
const CONCURRENCIES = [1, 2, 4] as const;

const fixtures = await startFixtureServer();
const pageUrl = fixtures.url('/simple');
const BENCH_ENV = { PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: process.env.RENDER_CONCURRENCY ?? '2' };
const config = loadApiConfig({ ...process.env, ...BENCH_ENV });

/** Something that takes captures of pageUrl, one per call, on up to 4 workers at once. */
interface Subject {
  name: string;
  capture(worker: number): Promise<void>;
  close(): Promise<void>;
}

async function launchFloorBrowser(): Promise<Browser> {
  return puppeteer.launch(chromiumLaunchOptions(config.renderer));
}

/** Bare puppeteer on warm pages: one already open page per worker, reused for every capture. */
async function warmFloor(): Promise<Subject> {
  const browser = await launchFloorBrowser();
  // One window per page, as each of the service's captures gets: headless Chromium renders only
  // the active tab of a window, so two tabs of one window would stall each other's screenshots.
  const pages: Page[] = [];
  for (let i = 0; i < Math.max(...CONCURRENCIES); i++) pages.push(await (await browser.createBrowserContext()).newPage());
  return {
    name: 'warm floor (page reused)',
    async capture(worker) {
      const page = pages[worker] as Page;
      await page.goto(pageUrl);
      await page.screenshot();
    },
    close: () => browser.close(),
  };
}

/** Bare puppeteer with isolation: a fresh context and page per capture, closed after it. */
async function isolatedFloor(): Promise<Subject> {
  const browser = await launchFloorBrowser();
  return {
    name: 'isolated floor (fresh context)',
    async capture() {
      const context = await browser.createBrowserContext();
      try {
        const page = await context.newPage();
        await page.goto(pageUrl);
        await page.screenshot();
      } finally {
        await context.close();
      }
    },
    close: () => browser.close(),
  };
}

/**
 * The renderer the API dispatches to: the in-process pool, or (remote) the renderer service in its
 * own process on loopback, reached over HTTP by the same RemoteRenderer that RENDERER_URL selects.
 */
async function startDispatch(dispatch: 'in-process' | 'remote', logger: Logger): Promise<{ renderer: Renderer; close(): Promise<void> }> {
  if (dispatch === 'in-process') {
    const renderer = await createChromiumRenderer({ ...config.renderer, concurrency: 4 }, logger);
    return { renderer, close: () => renderer.close() };
  }
  const service = await startServiceProcess(RENDERER_MAIN, { ...BENCH_ENV, RENDER_CONCURRENCY: '4', LOG_LEVEL: 'warn' }, { port: await closedPort() });
  const remote = loadApiConfig({ ...process.env, ...BENCH_ENV, RENDERER_URL: service.base }).remoteRenderer;
  const renderer = await createRemoteRenderer(remote!, logger);
  return {
    renderer,
    close: async () => {
      await renderer.close();
      await service.stop();
    },
  };
}

/** The API on loopback with `dispatch`'s renderer, and a capture that POSTs `body` to it. */
async function startService(body: Record<string, unknown>, dispatch: 'in-process' | 'remote' = 'in-process', name = '') {
  const logger = createLogger({ level: 'warn' });
  const dispatcher = await startDispatch(dispatch, logger);
  const server = http.createServer({ keepAliveTimeout: 65_000 }, createApp({ config, renderer: dispatcher.renderer, logger }).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/screenshot`;
  const capture = async () => {
    const response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: pageUrl, ...body }) });
    if (response.status !== 200) throw new Error(`capture answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  const close = async () => {
    server.close();
    await dispatcher.close();
  };
  return { name, capture, close };
}

/**
 * The remote path's overhead, measured in pairs: both paths up at once, one capture on each in
 * turn (alternating which goes first), so that load from elsewhere on the machine hits both alike.
 */
async function measureRemoteOverhead(body: Record<string, unknown>) {
  const [local, remote] = [await startService(body, 'in-process'), await startService(body, 'remote')];
  try {
    await runConcurrently(WARMUP, 1, local.capture);
    await runConcurrently(WARMUP, 1, remote.capture);
    const differences: number[] = [];
    const localMs: number[] = [];
    const remoteMs: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const order = i % 2 === 0 ? [local, remote] : [remote, local];
      const times = new Map<object, number>();
      for (const path of order) {
        const t0 = performance.now();
        await path.capture();
        times.set(path, performance.now() - t0);
      }
      localMs.push(times.get(local) as number);
      remoteMs.push(times.get(remote) as number);
      differences.push((times.get(remote) as number) - (times.get(local) as number));
    }
    return { localMedianMs: median(localMs), remoteMedianMs: median(remoteMs), medianDifferenceMs: median(differences), p95DifferenceMs: percentile(differences, 95) };
  } finally {
    await local.close();
    await remote.close();
  }
}

interface Figures {
  latencies: number[];
  perSecond: Map<number, number>;
  gapLatencies: number[];
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
      const run = await runConcurrently(perBlock, concurrency, (worker) => subject.capture(worker));
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
      const t0 = performance.now();
      await subject.capture(0);
      figures.get(subject)?.gapLatencies.push(performance.now() - t0);
    }
  }
}

console.log(`Viewfinder capture bench: ${SAMPLES} samples per figure, page ${pageUrl}, profile standard`);
console.log('Interleaved: each figure comes from alternating blocks of back-to-back captures per subject; ratios are what to compare.\n');
const isolated = await isolatedFloor();
const warm = await warmFloor();
const service = await startService({ quality: 'standard', removeAds: false }, 'in-process', 'service, removeAds:false');
const serviceDefaults = await startService({}, 'in-process', 'service, default options');
// The renderer in its own process may be too slow to start on a loaded machine; the floors and the service still get measured.
// BENCH_REMOTE=0 leaves the remote row out.
const remote = await (process.env.BENCH_REMOTE === '0'
  ? Promise.reject(new Error('BENCH_REMOTE=0'))
  : startService({ quality: 'standard', removeAds: false }, 'remote', 'remote renderer, removeAds:false')
).catch((err: Error) => {
  console.log(`remote renderer: not measured (${err.message.split('\n')[0]})`);
  return undefined;
});
const subjects: Subject[] = [isolated, warm, service, serviceDefaults, ...(remote ? [remote] : [])];
const figures = new Map(subjects.map((subject) => [subject, { latencies: [], perSecond: new Map(), gapLatencies: [] } as Figures]));
for (const subject of subjects) await runConcurrently(WARMUP, 1, (worker) => subject.capture(worker));
for (const concurrency of CONCURRENCIES) await measureBlocks(subjects, figures, concurrency);
await measureWithGaps([warm, serviceDefaults, service], figures);
await remote?.close();
for (const subject of subjects.filter((subject) => subject !== remote)) await subject.close();

const of = (subject: Subject) => figures.get(subject) as Figures;
const rows: string[][] = [['', 'median ms', 'p95 ms', ...CONCURRENCIES.map((c) => `c=${c} /s`), `${GAP_MS}ms gap: ms`]];
for (const subject of subjects) {
  const { latencies, perSecond, gapLatencies } = of(subject);
  rows.push([
    subject.name,
    fmt(median(latencies)),
    fmt(percentile(latencies, 95)),
    ...CONCURRENCIES.map((c) => fmt(perSecond.get(c) as number)),
    gapLatencies.length > 0 ? fmt(median(gapLatencies)) : '-',
  ]);
}
for (const row of rows) console.log((row[0] as string).padEnd(34) + row.slice(1).map((cell) => cell.padStart(14)).join(''));
console.log('');
const ratio = (a: number, b: number) => fmt(a / b, 2);
const latencyRatio = (subject: Subject, floor: Subject) => ratio(median(of(subject).latencies), median(of(floor).latencies));
const throughputRatio = (subject: Subject, floor: Subject, c: number) => ratio(of(subject).perSecond.get(c) as number, of(floor).perSecond.get(c) as number);
const gapRatio = (subject: Subject) => ratio(median(of(subject).gapLatencies), median(of(warm).gapLatencies));
console.log('Targets (figures taken in the same run, interleaved):');
console.log(`  default options at c=1, latency / isolated floor (target <= 1.15):             ${latencyRatio(serviceDefaults, isolated)}  (removeAds:false: ${latencyRatio(service, isolated)})`);
console.log(`  default options at c=2, throughput / isolated floor's (target >= 0.9):         ${throughputRatio(serviceDefaults, isolated, 2)}  (removeAds:false: ${throughputRatio(service, isolated, 2)}; at c=4: ${throughputRatio(serviceDefaults, isolated, 4)})`);
console.log(`  default options, one client ${GAP_MS} ms between captures / warm floor (target <= 1.3): ${gapRatio(serviceDefaults)}  (removeAds:false: ${gapRatio(service)})`);
console.log(`  for reference: isolated floor / warm floor at c=1: ${latencyRatio(isolated, warm)}, at c=2 throughput: ${throughputRatio(isolated, warm, 2)}`);
if (remote) console.log(`remote/in-process ratios from the rows above: median x${latencyRatio(remote, service)}, throughput at c=4 x${throughputRatio(remote, service, 4)}`);
// Last, so that a renderer process too slow to start on a loaded machine costs only this line.
const signed = (ms: number) => `${ms >= 0 ? '+' : ''}${fmt(ms)}`;
if (remote) try {
  const overhead = await measureRemoteOverhead({ quality: 'standard', removeAds: false });
  console.log(
    `remote path overhead, paired (API -> renderer over HTTP on loopback, removeAds:false, c=1): median ${signed(overhead.medianDifferenceMs)} ms per capture, p95 ${signed(overhead.p95DifferenceMs)} ms (medians: in-process ${fmt(overhead.localMedianMs)} ms, remote ${fmt(overhead.remoteMedianMs)} ms)`,
  );
} catch (err) {
  console.log(`remote path overhead: not measured (${(err as Error).message.split('\n')[0]})`);
}

await fixtures.close();
