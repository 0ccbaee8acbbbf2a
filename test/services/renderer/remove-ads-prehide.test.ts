import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { prepareCapturePage } from '../../../services/renderer/src/capture/prepare-page.ts';
import { createConsentHandling, loadConsentScripts, type ConsentHandling } from '../../../services/renderer/src/capture/remove-ads/consent.ts';
import { chromiumLaunchOptions } from '../../../services/renderer/src/pool.ts';
import { testConfig } from '../../support/harness.ts';

/**
 * Autoconsent hides the banners its rules know with a style of its own while it looks (its
 * prehide). That style is no change of the page's own: on a page with none of those banners it
 * hides nothing, and the readiness probe must not count it (it threw away the picture taken during
 * the cleaning, and the whole cleaning ran twice); where it hides something shown, the consent
 * handling says it acted.
 */
describe('removeAds: autoconsent hiding the banners it knows (real Chromium)', function () {
  this.timeout(30_000);
  const PAGES: Record<string, string> = {
    '/no-banner': '<p>An article about cookies, with no banner at all.</p>',
    // Didomi's popup is among the banners autoconsent hides on every page while it looks.
    '/known-banner':
      '<p>An article.</p><div id="didomi-popup" style="position:fixed;bottom:0;left:0;right:0;height:100px;background:#00f">We use cookies.</div>',
  };
  let browser: Browser;
  let page: Page;
  let server: http.Server;
  let origin: string;
  let consent: ConsentHandling;

  before(async () => {
    server = http.createServer((req, res) => {
      const body = PAGES[req.url ?? ''];
      res.writeHead(body ? 200 : 404, { 'content-type': 'text/html', 'cache-control': 'no-store' });
      res.end(body ? `<!doctype html><html><head><title>fixture</title></head><body>${body}</body></html>` : '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
    consent = createConsentHandling(loadConsentScripts());
  });
  beforeEach(async () => {
    page = await (await browser.createBrowserContext()).newPage();
    await prepareCapturePage(page);
  });
  afterEach(() => page.browserContext().close());
  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** When the readiness probe last saw the page change, on the page's clock (ms, rounded). */
  const lastChange = () =>
    page.evaluate(() => {
      const probe = (window as unknown as Record<string, { msSinceChange(): number }>)['__viewfinderReadiness'] as { msSinceChange(): number };
      return Math.round(performance.now() - probe.msSinceChange());
    });
  /** How many rules autoconsent's hiding style holds, and whether it carries Viewfinder's mark. */
  const prehideStyle = () =>
    page.evaluate(() => {
      const style = document.querySelector<HTMLStyleElement>('style#autoconsent-prehide');
      return { rules: style?.sheet?.cssRules.length ?? 0, marked: style?.hasAttribute('data-viewfinder-own') ?? false };
    });

  it('on a page with none of the banners it hides, its hiding style is no change of the page and no action', async () => {
    await page.goto(`${origin}/no-banner`, { waitUntil: 'load' });
    const before = await lastChange();
    expect(await consent.answer(page, 3000)).to.equal(false);
    expect(await prehideStyle()).to.deep.equal({ rules: 1, marked: true });
    expect(await lastChange()).to.equal(before);
  });

  it('on a page showing one of the banners it hides, says it acted', async () => {
    await page.goto(`${origin}/known-banner`, { waitUntil: 'load' });
    expect(await consent.answer(page, 3000)).to.equal(true);
    expect(await page.$eval('#didomi-popup', (element) => getComputedStyle(element).opacity)).to.equal('0');
  });

  it('still counts a change to a style of the page itself', async () => {
    await page.goto(`${origin}/no-banner`, { waitUntil: 'load' });
    const before = await lastChange();
    await page.evaluate(async () => {
      const style = document.createElement('style');
      style.textContent = 'p { color: #333 }';
      document.head.append(style);
      await new Promise((resolve) => requestAnimationFrame(resolve));
    });
    expect(await lastChange()).to.be.above(before);
  });
});
