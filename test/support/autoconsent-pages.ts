import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { prepareCapturePage } from '../../services/renderer/src/capture/prepare-page.ts';
import { createConsentHandling, loadConsentScripts, type ConsentHandling } from '../../services/renderer/src/capture/remove-ads/consent.ts';
import { chromiumLaunchOptions } from '../../services/renderer/src/pool.ts';
import { testConfig } from './harness.ts';

/** What a test of the consent handling works with; filled in by the hooks useAutoconsentPages adds. */
export interface AutoconsentBed {
  /** A fresh page in a fresh context for each test, prepared as a capture's page is. */
  page: Page;
  consent: ConsentHandling;
  /** Where `pages` are served, on 127.0.0.1. */
  origin: string;
}

/**
 * Adds mocha hooks to the calling `describe`: `pages` (path to body HTML) served on loopback, each
 * body in the same document (`bodyStyle` on its body), a real Chromium with the service's flags,
 * the consent handling with its scripts, and a new capture-ready page for each test.
 */
export function useAutoconsentPages(pages: Record<string, string>, bodyStyle = ''): AutoconsentBed {
  const bed = {} as AutoconsentBed;
  let browser: Browser;
  let server: http.Server;
  before(async () => {
    server = http.createServer((req, res) => {
      const body = pages[req.url ?? ''];
      res.writeHead(body ? 200 : 404, { 'content-type': 'text/html', 'cache-control': 'no-store' });
      res.end(body ? `<!doctype html><html><head><title>fixture</title></head><body${bodyStyle ? ` style="${bodyStyle}"` : ''}>${body}</body></html>` : '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    bed.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
    bed.consent = createConsentHandling(loadConsentScripts());
  });
  beforeEach(async () => {
    bed.page = await (await browser.createBrowserContext()).newPage();
    await prepareCapturePage(bed.page);
  });
  afterEach(() => bed.page.browserContext().close());
  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });
  return bed;
}
