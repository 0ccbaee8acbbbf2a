import { expect } from 'chai';
import { useAutoconsentPages } from '../../support/autoconsent-pages.ts';

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
  const bed = useAutoconsentPages(PAGES);

  /** When the readiness probe last saw the page change, on the page's clock (ms, rounded). */
  const lastChange = () =>
    bed.page.evaluate(() => {
      const probe = (window as unknown as Record<string, { msSinceChange(): number }>)['__viewfinderReadiness'] as { msSinceChange(): number };
      return Math.round(performance.now() - probe.msSinceChange());
    });
  /** How many rules autoconsent's hiding style holds, and whether it carries Viewfinder's mark. */
  const prehideStyle = () =>
    bed.page.evaluate(() => {
      const style = document.querySelector<HTMLStyleElement>('style#autoconsent-prehide');
      return { rules: style?.sheet?.cssRules.length ?? 0, marked: style?.hasAttribute('data-viewfinder-own') ?? false };
    });

  it('on a page with none of the banners it hides, its hiding style is no change of the page and no action', async () => {
    await bed.page.goto(`${bed.origin}/no-banner`, { waitUntil: 'load' });
    const before = await lastChange();
    expect(await bed.consent.answer(bed.page, 3000)).to.equal(false);
    expect(await prehideStyle()).to.deep.equal({ rules: 1, marked: true });
    expect(await lastChange()).to.equal(before);
  });

  it('on a page showing one of the banners it hides, says it acted', async () => {
    await bed.page.goto(`${bed.origin}/known-banner`, { waitUntil: 'load' });
    expect(await bed.consent.answer(bed.page, 3000)).to.equal(true);
    expect(await bed.page.$eval('#didomi-popup', (element) => getComputedStyle(element).opacity)).to.equal('0');
  });

  it('still counts a change to a style of the page itself', async () => {
    await bed.page.goto(`${bed.origin}/no-banner`, { waitUntil: 'load' });
    const before = await lastChange();
    await bed.page.evaluate(async () => {
      const style = document.createElement('style');
      style.textContent = 'p { color: #333 }';
      document.head.append(style);
      await new Promise((resolve) => requestAnimationFrame(resolve));
    });
    expect(await lastChange()).to.be.above(before);
  });
});
