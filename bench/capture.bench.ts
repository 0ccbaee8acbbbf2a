/**
 * make bench: capture latency and throughput of the service against a floor, in one run, on the
 * same fixture page. The floor is a bare puppeteer `goto` + `screenshot` on an already open page,
 * in a Chromium launched with the same flags. Prints figures and ratios; asserts nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { createLogger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { chromiumLaunchOptions, createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { fmt, median, percentile, runConcurrently } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const WARMUP = 5;

const fixtures = await startFixtureServer();
const pageUrl = fixtures.url('/simple');
const config = loadApiConfig({ ...process.env, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: process.env.RENDER_CONCURRENCY ?? '2' });

async function measureFloor() {
  const browser = await puppeteer.launch(chromiumLaunchOptions(config.renderer));
  try {
    const pages = [await browser.newPage(), await browser.newPage()];
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

async function measureService(body: Record<string, unknown>) {
  const logger = createLogger({ level: 'warn' });
  const renderer = await createChromiumRenderer({ ...config.renderer, concurrency: 4 }, logger);
  const server = http.createServer({ keepAliveTimeout: 65_000 }, createApp({ config, renderer, logger }).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/screenshot`;
  const capture = async () => {
    const response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: pageUrl, ...body }) });
    if (response.status !== 200) throw new Error(`capture answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  try {
    await runConcurrently(WARMUP, 1, capture);
    const c1 = await runConcurrently(SAMPLES, 1, capture);
    const c2 = await runConcurrently(SAMPLES, 2, capture);
    const c4 = await runConcurrently(SAMPLES, 4, capture);
    return { medianMs: median(c1.durations), p95Ms: percentile(c1.durations, 95), c1PerSecond: c1.perSecond, c2PerSecond: c2.perSecond, c4PerSecond: c4.perSecond };
  } finally {
    server.close();
    await renderer.close();
  }
}

console.log(`Viewfinder capture bench: ${SAMPLES} samples per figure, page ${pageUrl}, profile standard\n`);
const floor = await measureFloor();
const service = await measureService({ quality: 'standard', removeAds: false });
const serviceDefaults = await measureService({});

const rows: [string, string, string, string, string, string][] = [
  ['', 'median ms', 'p95 ms', 'c=1 /s', 'c=2 /s', 'c=4 /s'],
  ['floor (bare puppeteer)', fmt(floor.medianMs), fmt(floor.p95Ms), fmt(floor.c1PerSecond), fmt(floor.c2PerSecond), '-'],
  ['service, removeAds:false', fmt(service.medianMs), fmt(service.p95Ms), fmt(service.c1PerSecond), fmt(service.c2PerSecond), fmt(service.c4PerSecond)],
  ['service, default options', fmt(serviceDefaults.medianMs), fmt(serviceDefaults.p95Ms), fmt(serviceDefaults.c1PerSecond), fmt(serviceDefaults.c2PerSecond), fmt(serviceDefaults.c4PerSecond)],
];
for (const row of rows) console.log(row[0].padEnd(28) + row.slice(1).map((cell) => cell.padStart(11)).join(''));
console.log('');
console.log(`latency ratio, service/floor (target <= 1.15):          ${fmt(service.medianMs / floor.medianMs, 2)}  (default options: ${fmt(serviceDefaults.medianMs / floor.medianMs, 2)})`);
console.log(`throughput ratio at c=2, service/floor (target >= 0.8): ${fmt(service.c2PerSecond / floor.c2PerSecond, 2)}  (default options: ${fmt(serviceDefaults.c2PerSecond / floor.c2PerSecond, 2)})`);

await fixtures.close();
