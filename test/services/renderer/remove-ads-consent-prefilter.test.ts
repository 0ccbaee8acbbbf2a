import { expect } from 'chai';
import type { PictureArea } from '../../../services/renderer/src/capture/capture-page.ts';
import { useAutoconsentPages } from '../../support/autoconsent-pages.ts';

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
  const bed = useAutoconsentPages(PAGES, 'margin:0');

  /** Whether autoconsent ran in the page while the consent handling answered it. */
  async function ranOn(pathname: string, area?: PictureArea): Promise<boolean> {
    await bed.page.goto(`${bed.origin}${pathname}`, { waitUntil: 'load' });
    await bed.consent.answer(bed.page, 3000, area);
    return bed.page.evaluate(() => 'autoconsentSendMessage' in window);
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
