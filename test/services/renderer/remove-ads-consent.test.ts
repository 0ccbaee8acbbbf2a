import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import type { PictureArea } from '../../../services/renderer/src/capture/capture-page.ts';
import { prepareCapturePage } from '../../../services/renderer/src/capture/prepare-page.ts';
import { createConsentHandling, loadConsentScripts, type ConsentHandling } from '../../../services/renderer/src/capture/remove-ads/consent.ts';
import { chromiumLaunchOptions } from '../../../services/renderer/src/pool.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { testConfig } from '../../support/harness.ts';

/** The consent handling on its own (autoconsent and its bridge), on a page ready for a capture (1280x720 viewport). */
describe('removeAds: consent handling (real Chromium)', function () {
  this.timeout(30_000);
  let browser: Browser;
  let page: Page;
  let fixtures: FixtureServer;
  let consent: ConsentHandling;

  before(async () => {
    [fixtures, browser] = await Promise.all([startFixtureServer(), puppeteer.launch(chromiumLaunchOptions(testConfig().renderer))]);
    consent = createConsentHandling(loadConsentScripts());
  });
  beforeEach(async () => {
    page = await (await browser.createBrowserContext()).newPage();
    await prepareCapturePage(page);
  });
  afterEach(() => page.browserContext().close());
  after(async () => {
    await browser?.close();
    await fixtures?.close();
  });

  /** Loads a page with `body`, as /echo serves it. */
  const load = (body: string) =>
    page.goto(fixtures.url(`/echo?html=${encodeURIComponent(`<!doctype html><html><head><title>fixture</title></head><body style="margin:0">${body}</body></html>`)}`), {
      waitUntil: 'load',
    });

  /**
   * Autoconsent runs its rules over the whole DOM, which on a long page costs more than the
   * picture: it runs only where text about cookies, consent or privacy is shown in what the
   * picture shows, and not in the page's navigation.
   */
  describe('where autoconsent runs', () => {
    const VIEWPORT: PictureArea = { fromViewportTop: true, height: 720 };
    const FULL_PAGE: PictureArea = { fromViewportTop: false, height: 16_384 };
    const FAR_BELOW = '<p style="margin-top:5000px">Our privacy policy.</p>';

    /** Whether autoconsent ran in the page while the consent handling answered it. */
    async function ranOn(body: string, area?: PictureArea): Promise<boolean> {
      await load(body);
      await consent.answer(page, 3000, area);
      return page.evaluate(() => 'autoconsentSendMessage' in window);
    }

    it('runs where the words are shown in the viewport', async () => {
      expect(await ranOn('<p>We use cookies to remember you.</p>', VIEWPORT)).to.equal(true);
    });

    it('runs for a fixed notice at the bottom of the viewport, however far down the DOM it comes', async () => {
      expect(await ranOn(`${'<p>Text.</p>'.repeat(300)}<div style="position:fixed;bottom:0">We use cookies.</div>`, VIEWPORT)).to.equal(true);
    });

    it("does not run where the words are only in the page's navigation", async () => {
      const navigation = '<nav><a href="/tracking">Asynchronous context tracking</a></nav><div role="navigation"><a href="/privacy">Privacy</a></div><p>Text.</p>';
      expect(await ranOn(navigation, VIEWPORT)).to.equal(false);
    });

    it('does not run for a viewport picture where the words are only far below it', async () => {
      expect(await ranOn(FAR_BELOW, VIEWPORT)).to.equal(false);
    });

    it('runs for a full-page picture that reaches them', async () => {
      expect(await ranOn(FAR_BELOW, FULL_PAGE)).to.equal(true);
    });

    it('runs where the picture shows the whole page (a PDF, an element)', async () => {
      expect(await ranOn(FAR_BELOW)).to.equal(true);
    });

    it('does not run where the words are in no shown text (hidden, a script)', async () => {
      expect(await ranOn('<p>Text.</p><div style="display:none">We use cookies.</div><script>/* cookie */</script>')).to.equal(false);
    });
  });

  /**
   * Autoconsent hides the banners its rules know with a style of its own while it looks (its
   * prehide). That style is no change of the page's own: on a page with none of those banners it
   * hides nothing, and the readiness probe must not count it (it threw away the picture taken during
   * the cleaning, and the whole cleaning ran twice); where it hides something shown, the consent
   * handling says it acted.
   */
  describe('the banners autoconsent hides while it looks', () => {
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
    const NO_BANNER = '<p>An article about cookies, with no banner at all.</p>';

    it('on a page with none of them, its hiding style is no change of the page and no action', async () => {
      await load(NO_BANNER);
      const before = await lastChange();
      expect(await consent.answer(page, 3000)).to.equal(false);
      expect(await prehideStyle()).to.deep.equal({ rules: 1, marked: true });
      expect(await lastChange()).to.equal(before);
    });

    it('on a page showing one of them, says it acted', async () => {
      // Didomi's popup is among the banners autoconsent hides on every page while it looks.
      await load('<p>An article.</p><div id="didomi-popup" style="position:fixed;bottom:0;left:0;right:0;height:100px;background:#00f">We use cookies.</div>');
      expect(await consent.answer(page, 3000)).to.equal(true);
      expect(await page.$eval('#didomi-popup', (element) => getComputedStyle(element).opacity)).to.equal('0');
    });

    it('still counts a change to a style of the page itself', async () => {
      await load(NO_BANNER);
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
});
