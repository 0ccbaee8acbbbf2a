/**
 * A floor's own process (started by floor-process.ts, spoken to over Node's IPC channel): bare
 * puppeteer-core in Chromium launched with the service's flags, taking the captures its parent asks
 * for and answering with their durations, measured here. Isolated captures close their context
 * before the answer goes back, so that the next subject never shares the machine with this one's
 * clean-up.
 */
import puppeteer, { type Page } from 'puppeteer-core';
import { loadApiConfig } from '../../services/api/src/config.ts';
import { chromiumLaunchOptions } from '../../services/renderer/src/pool.ts';
import { readPngSize } from '../../services/renderer/src/capture/png.ts';
import { runConcurrently } from '../stats.ts';
import type { FloorCapture, FloorReply, FloorRequest, FloorShot } from './floor-process.ts';

const warm = process.env.FLOOR_MODE === 'warm';
const browser = await puppeteer.launch(chromiumLaunchOptions(loadApiConfig(process.env).renderer));
const warmPages: Page[] = [];
if (warm) for (let i = 0; i < Number(process.env.FLOOR_WORKERS ?? 4); i++) warmPages.push(await (await browser.createBrowserContext()).newPage());

async function shoot(page: Page, { url, waitUntil = 'load', fullPage = false, maxHeight = 16_384 }: FloorShot): Promise<Uint8Array> {
  await page.goto(url, { waitUntil });
  if (!fullPage) return page.screenshot();
  // What puppeteer's fullPage does (a clip of the whole document, beyond the viewport), cut at the
  // service's cap: Chromium refuses a page taller than that with "Page is too large".
  const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, innerHeight));
  const width = page.viewport()?.width ?? 1280;
  return page.screenshot({ captureBeyondViewport: true, clip: { x: 0, y: 0, width, height: Math.min(height, maxHeight) } });
}

async function capture(worker: number, shot: FloorShot): Promise<FloorCapture> {
  const started = performance.now();
  if (warm) {
    const bytes = await shoot(warmPages[worker % warmPages.length] as Page, shot);
    return { ms: performance.now() - started, ...readPngSize(bytes) };
  }
  const context = await browser.createBrowserContext();
  try {
    const bytes = await shoot(await context.newPage(), shot);
    return { ms: performance.now() - started, ...readPngSize(bytes) };
  } finally {
    await context.close();
  }
}

async function answer(request: FloorRequest): Promise<FloorReply> {
  if (request.op === 'capture') return { id: request.id, capture: await capture(request.worker, request.shot) };
  const run = await runConcurrently(request.count, request.concurrency, async (worker) => void (await capture(worker, request.shot)));
  return { id: request.id, block: { durations: run.durations, perSecond: run.perSecond } };
}

process.on('message', (request: FloorRequest) => {
  answer(request).then(
    (reply) => process.send?.(reply),
    (err: unknown) => process.send?.({ id: request.id, error: String((err as Error)?.message ?? err) } satisfies FloorReply),
  );
});
process.on('disconnect', () => {
  void browser.close().finally(() => process.exit(0));
});
process.send?.('ready');
