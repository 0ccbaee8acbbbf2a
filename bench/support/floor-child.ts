/**
 * The floor's own process (started by floor-process.ts, spoken to over Node's IPC channel): bare
 * puppeteer-core in Chromium launched with the service's flags. Each capture gets a fresh browser
 * context, closed before the answer goes back, so that a bench that alternates subjects never has
 * the next one share the machine with this one's clean-up. Captures asked for together run together.
 */
import puppeteer from 'puppeteer-core';
import { loadApiConfig } from '../../services/api/src/config.ts';
import { chromiumLaunchOptions } from '../../services/renderer/src/pool.ts';
import { readPngSize } from '../../services/renderer/src/capture/png.ts';
import type { FloorReply, FloorRequest } from './floor-process.ts';

const config = loadApiConfig(process.env).renderer;
const browser = await puppeteer.launch(chromiumLaunchOptions(config));

async function capture({ url, fullPage, waitUntil, maxHeight }: FloorRequest): Promise<Omit<FloorReply, 'id'>> {
  const started = performance.now();
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil });
    let bytes: Uint8Array;
    if (fullPage) {
      // What puppeteer's fullPage does (a clip of the whole document, beyond the viewport), cut at
      // the service's cap: Chromium refuses a page taller than that with "Page is too large".
      const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, innerHeight));
      const width = page.viewport()?.width ?? 1280;
      bytes = await page.screenshot({ captureBeyondViewport: true, clip: { x: 0, y: 0, width, height: Math.min(height, maxHeight) } });
    } else {
      bytes = await page.screenshot();
    }
    const ms = performance.now() - started;
    return { ms, ...readPngSize(bytes) };
  } finally {
    await context.close();
  }
}

process.on('message', (request: FloorRequest) => {
  capture(request).then(
    (result) => process.send?.({ id: request.id, ...result } satisfies FloorReply),
    (err: unknown) => process.send?.({ id: request.id, ms: 0, width: 0, height: 0, error: String((err as Error)?.message ?? err) } satisfies FloorReply),
  );
});
process.on('disconnect', () => {
  void browser.close().finally(() => process.exit(0));
});
process.send?.('ready');
