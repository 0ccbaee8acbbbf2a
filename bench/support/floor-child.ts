/**
 * A floor in its own process (bench/support/floor-process.ts starts it): bare puppeteer-core on the
 * service's Chromium, launched with the service's flags, taking the captures its parent asks for
 * over IPC and answering with their durations, measured here, next to the browser.
 *
 * FLOOR_MODE=isolated: a fresh browser context and page per capture, closed after it.
 * FLOOR_MODE=warm: one page per worker, opened at start and reused (each in its own context, so in
 * its own window: headless Chromium renders only a window's active tab).
 */
import puppeteer, { type Page } from 'puppeteer-core';
import { loadApiConfig } from '../../services/api/src/config.ts';
import { chromiumLaunchOptions } from '../../services/renderer/src/pool.ts';
import { runConcurrently } from '../stats.ts';
import type { FloorReply, FloorRequest, FloorShot } from './floor-process.ts';

const mode = process.env.FLOOR_MODE === 'warm' ? 'warm' : 'isolated';
const workers = Number(process.env.FLOOR_WORKERS ?? 4);
const browser = await puppeteer.launch(chromiumLaunchOptions(loadApiConfig(process.env).renderer));
const warmPages: Page[] = [];
if (mode === 'warm') for (let i = 0; i < workers; i++) warmPages.push(await (await browser.createBrowserContext()).newPage());

async function shoot(page: Page, shot: FloorShot): Promise<void> {
  await page.goto(shot.url, { waitUntil: shot.waitUntil ?? 'load' });
  await page.screenshot({ fullPage: shot.fullPage ?? false });
}

async function capture(worker: number, shot: FloorShot): Promise<void> {
  if (mode === 'warm') return shoot(warmPages[worker % warmPages.length] as Page, shot);
  const context = await browser.createBrowserContext();
  try {
    await shoot(await context.newPage(), shot);
  } finally {
    await context.close();
  }
}

async function answer(request: FloorRequest): Promise<FloorReply> {
  switch (request.op) {
    case 'capture': {
      const t0 = performance.now();
      await capture(request.worker ?? 0, request.shot);
      return { id: request.id, ms: performance.now() - t0 };
    }
    case 'block': {
      const run = await runConcurrently(request.count, request.concurrency, (worker) => capture(worker, request.shot));
      return { id: request.id, durations: run.durations, perSecond: run.perSecond };
    }
    case 'close':
      await browser.close();
      return { id: request.id };
  }
}

process.on('message', (request: FloorRequest) => {
  answer(request).then(
    (reply) => {
      process.send?.(reply);
      if (request.op === 'close') process.disconnect();
    },
    (err: Error) => process.send?.({ id: request.id, error: err.message }),
  );
});
process.send?.({ id: 0, ready: true });
