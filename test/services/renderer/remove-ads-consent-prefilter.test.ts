import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import type { PictureArea } from '../../../services/renderer/src/capture/capture-page.ts';
import { prepareCapturePage } from '../../../services/renderer/src/capture/prepare-page.ts';
import { createConsentHandling, loadConsentScripts, type ConsentHandling } from '../../../services/renderer/src/capture/remove-ads/consent.ts';
import { chromiumLaunchOptions } from '../../../services/renderer/src/pool.ts';
import { testConfig } from '../../support/harness.ts';

/**
 * Autoconsent runs its rules over the whole DOM, which on a long page costs more than the picture:
 * it runs only where text about cookies, consent or privacy is shown in what the picture shows, and
 * not in the page's navigation (1280x720 viewport).
 */
describe('removeAds: where autoconsent runs (real Chromium)', function () {
  this.timeout(30_000);
  const VIEWPORT: PictureArea = { fromViewportTop: true, height: 720 };
  const FULL_PAGE: PictureArea = { fromViewportTop: false, height: 16_384 };
  const PAGES: Record<string, string> = {
    '/in-view': '<p>We use cookies to remember you.</p>',
    '/in-navigation': '<nav><a href="/tracking">Asynchronous context tracking</a></nav><div role="navigation"><a href="/privacy">Privacy</a></div><p>Text.</p>',
    '/far-below': '<p style="margin-top:5000px">Our privacy policy.</p>',
    '/fixed-at-bottom': `${'<p>Text.</p>'.repeat(300)}<div style="position:fixed;bottom:0">We use cookies.</div>`,
    '/hidden': '<p>Text.</p><div style="display:none">We use cookies.</div><script>/* cookie */</script>',
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
      res.end(body ? `<!doctype html><html><head><title>fixture</title></head><body style="margin:0">${body}</body></html>` : '');
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

  /** Whether autoconsent ran in the page while the consent handling answered it. */
  async function ranOn(pathname: string, area?: PictureArea): Promise<boolean> {
    await page.goto(`${origin}${pathname}`, { waitUntil: 'load' });
    await consent.answer(page, 3000, area);
    return page.evaluate(() => 'autoconsentSendMessage' in window);
  }

  it('runs where the words are shown in the viewport', async () => {
    expect(await ranOn('/in-view', VIEWPORT)).to.equal(true);
  });

  it('runs for a fixed notice at the bottom of the viewport, however far down the DOM it comes', async () => {
    expect(await ranOn('/fixed-at-bottom', VIEWPORT)).to.equal(true);
  });

  it("does not run where the words are only in the page's navigation", async () => {
    expect(await ranOn('/in-navigation', VIEWPORT)).to.equal(false);
  });

  it('does not run for a viewport picture where the words are only far below it', async () => {
    expect(await ranOn('/far-below', VIEWPORT)).to.equal(false);
  });

  it('runs for a full-page picture that reaches them', async () => {
    expect(await ranOn('/far-below', FULL_PAGE)).to.equal(true);
  });

  it('runs where the picture shows the whole page (a PDF, an element)', async () => {
    expect(await ranOn('/far-below')).to.equal(true);
  });

  it('does not run where the words are in no shown text (hidden, a script)', async () => {
    expect(await ranOn('/hidden')).to.equal(false);
  });
});
