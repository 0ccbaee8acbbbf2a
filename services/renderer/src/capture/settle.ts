import type { Page } from 'puppeteer-core';

/**
 * The default readiness check when the request gives no `wait`: web fonts are loaded and two
 * animation frames have been painted since the load event, so that what load revealed is on screen.
 */
export async function settle(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await document.fonts.ready;
    await new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
  });
}
