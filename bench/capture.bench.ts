/**
 * make bench: capture latency and throughput of the service against a floor, in one run, on the
 * same fixture page. The floor is a bare puppeteer `goto` + `screenshot` on an already open page,
 * in a Chromium launched with the same flags. The remote row sends the same captures through the
 * renderer service in its own process (RENDERER_URL), to show what the HTTP hop costs. Prints
 * figures and ratios; asserts nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { createLogger, type Logger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { chromiumLaunchOptions, createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { createRemoteRenderer } from '../services/api/src/remote-renderer.ts';
import type { Renderer } from '../services/renderer/src/renderer.ts';
import { closedPort, startFixtureServer } from '../test/support/fixture-server.ts';
import { RENDERER_MAIN, startServiceProcess } from '../test/support/processes.ts';
import { fmt, median, percentile, runConcurrently } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const WARMUP = 5;

const fixtures = await startFixtureServer();
const pageUrl = fixtures.url('/simple');
const BENCH_ENV = { PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: process.env.RENDER_CONCURRENCY ?? '2' };
const config = loadApiConfig({ ...process.env, ...BENCH_ENV });

async function measureFloor() {
  const browser = await puppeteer.launch(chromiumLaunchOptions(config.renderer));
  try {
    // One window per page, as each of the service's captures gets: headless Chromium renders only
    // the active tab of a window, so two tabs of one window would stall each other's screenshots.
    const openPage = async () => (await browser.createBrowserContext()).newPage();
    const pages = [await openPage(), await openPage()];
    const shot = async (worker: number) => {
      const page = pages[worker] as (typeof pages)[number];
      await page.goto(pageUrl);
      await page.screenshot();
    };
    await runConcurrently(WARMUP, 1, shot);
    const c1 = await runConcurrently(SAMPLES, 1, shot);
    const c2 = await runConcurrently(SAMPLES, 2, shot);
    return { medianMs: median(c1.durations), p95Ms: percentile(c1.durations, 95), c1PerSecond: c1.perSecond, c2PerSecond: c2.perSecond };
  } finally {
    await browser.close();
  }
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

async function measureService(body: Record<string, unknown>, dispatch: 'in-process' | 'remote' = 'in-process') {
  const { capture, close } = await startService(body, dispatch);
  try {
    await runConcurrently(WARMUP, 1, capture);
    const c1 = await runConcurrently(SAMPLES, 1, capture);
    const c2 = await runConcurrently(SAMPLES, 2, capture);
    const c4 = await runConcurrently(SAMPLES, 4, capture);
    return { medianMs: median(c1.durations), p95Ms: percentile(c1.durations, 95), c1PerSecond: c1.perSecond, c2PerSecond: c2.perSecond, c4PerSecond: c4.perSecond };
  } finally {
    await close();
  }
}

/** The API on loopback with `dispatch`'s renderer, and a capture that POSTs `body` to it. */
async function startService(body: Record<string, unknown>, dispatch: 'in-process' | 'remote') {
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
  return { capture, close };
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

console.log(`Viewfinder capture bench: ${SAMPLES} samples per figure, page ${pageUrl}, profile standard\n`);
const floor = await measureFloor();
const service = await measureService({ quality: 'standard', removeAds: false });
const serviceDefaults = await measureService({});
const remote = await measureService({ quality: 'standard', removeAds: false }, 'remote');
const overhead = await measureRemoteOverhead({ quality: 'standard', removeAds: false });

const rows: [string, string, string, string, string, string][] = [
  ['', 'median ms', 'p95 ms', 'c=1 /s', 'c=2 /s', 'c=4 /s'],
  ['floor (bare puppeteer)', fmt(floor.medianMs), fmt(floor.p95Ms), fmt(floor.c1PerSecond), fmt(floor.c2PerSecond), '-'],
  ['service, removeAds:false', fmt(service.medianMs), fmt(service.p95Ms), fmt(service.c1PerSecond), fmt(service.c2PerSecond), fmt(service.c4PerSecond)],
  ['service, default options', fmt(serviceDefaults.medianMs), fmt(serviceDefaults.p95Ms), fmt(serviceDefaults.c1PerSecond), fmt(serviceDefaults.c2PerSecond), fmt(serviceDefaults.c4PerSecond)],
  ['remote renderer, removeAds:false', fmt(remote.medianMs), fmt(remote.p95Ms), fmt(remote.c1PerSecond), fmt(remote.c2PerSecond), fmt(remote.c4PerSecond)],
];
for (const row of rows) console.log(row[0].padEnd(34) + row.slice(1).map((cell) => cell.padStart(11)).join(''));
console.log('');
console.log(`latency ratio, service/floor (target <= 1.15):          ${fmt(service.medianMs / floor.medianMs, 2)}  (default options: ${fmt(serviceDefaults.medianMs / floor.medianMs, 2)})`);
console.log(`throughput ratio at c=2, service/floor (target >= 0.8): ${fmt(service.c2PerSecond / floor.c2PerSecond, 2)}  (default options: ${fmt(serviceDefaults.c2PerSecond / floor.c2PerSecond, 2)})`);
const signed = (ms: number) => `${ms >= 0 ? '+' : ''}${fmt(ms)}`;
console.log(
  `remote path overhead, paired (API -> renderer over HTTP on loopback, removeAds:false, c=1): median ${signed(overhead.medianDifferenceMs)} ms per capture, p95 ${signed(overhead.p95DifferenceMs)} ms (medians: in-process ${fmt(overhead.localMedianMs)} ms, remote ${fmt(overhead.remoteMedianMs)} ms)`,
);
console.log(`remote/in-process ratios from the rows above: median x${fmt(remote.medianMs / service.medianMs, 2)}, throughput at c=4 x${fmt(remote.c4PerSecond / service.c4PerSecond, 2)}`);

await fixtures.close();
