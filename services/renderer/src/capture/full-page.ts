import type { Page } from 'puppeteer-core';
import type { NetworkMonitor } from './network-monitor.ts';
import { smartWait, type SmartWaitSettings } from './smart-wait.ts';
import { TWO_FRAMES_MAX_MS, waitAtMost } from './wait-at-most.ts';
import { phase } from './phase-spans.ts';

/** How long one scroll step may wait for what it triggered. */
const STEP_MAX_MS = 1500;

export function documentHeight(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, innerHeight));
}

/**
 * Scrolls through the page one viewport at a time, down to the height cap, so that lazy images and
 * infinite-scroll sentinels fire, waiting briefly at each step for what they load; then returns to
 * the top. Bounded by `deadline` (performance.now() clock).
 *
 * Scrolling costs a smart wait per viewport, so it happens only where it can change something: a
 * page where scrolling sets nothing off (readiness-probe.ts follows what watches it) gets its native
 * lazy images and iframes loaded at once instead, which is the same picture, and the smart wait
 * that follows waits for them.
 */
/** renderer.full_page when tracing is on (phase-spans.ts). */
export const revealLazyContent = phase('renderer.full_page', untracedRevealLazyContent);

async function untracedRevealLazyContent(
  page: Page,
  network: NetworkMonitor,
  settings: SmartWaitSettings,
  deadline: number,
  maxCssHeight: number,
): Promise<void> {
  if (!(await loadLazyContentUnlessScrollMatters(page))) return;
  const stepSettings = { ...settings, churnToleranceMs: Math.min(settings.churnToleranceMs, 300) };
  const viewportHeight = page.viewport()?.height ?? 720;
  let top = 0;
  while (performance.now() < deadline) {
    const bottom = Math.min(await documentHeight(page), maxCssHeight);
    if (top + viewportHeight >= bottom) break;
    top += viewportHeight;
    // Two frames after the scroll, so that intersection observers and scroll handlers have run (and
    // their changes count) before the smart wait looks: a scroll itself is no DOM change, and a page
    // scrolled past in one frame never saw its content come into view.
    await waitAtMost(
      TWO_FRAMES_MAX_MS,
      page.evaluate(async (y) => {
        window.scrollTo({ top: y, left: 0, behavior: 'instant' });
        await new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
      }, top),
    );
    await smartWait(page, network, stepSettings, Math.min(deadline, performance.now() + STEP_MAX_MS), false);
  }
  if (top > 0) {
    await page.evaluate(() => window.scrollTo({ top: 0, left: 0, behavior: 'instant' }));
  }
}

/**
 * True when scrolling could set something off (readiness-probe.ts: a scroll or wheel listener, an
 * observed element below the fold, any reaction at all in a frame); otherwise makes native lazy
 * images and iframes eager. Node's fs.html observes only its sticky header, in view at the top:
 * scrolling its 16,384 px, one smart wait per viewport, took longer than its picture.
 */
function loadLazyContentUnlessScrollMatters(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const probe = (window as unknown as Record<string, { revealedByScrolling(): boolean } | undefined>)['__viewfinderReadiness'];
    const framesReact = Array.from(document.querySelectorAll('iframe')).some((iframe) => {
      try {
        // A cross-origin frame cannot be read, so it might react.
        const inner = (iframe.contentWindow as unknown as Record<string, { scrollReactions(): number } | undefined> | null)?.['__viewfinderReadiness'];
        return !inner || inner.scrollReactions() > 0;
      } catch {
        return true;
      }
    });
    if (!probe || probe.revealedByScrolling() || framesReact) return true;
    for (const element of Array.from(document.querySelectorAll<HTMLImageElement | HTMLIFrameElement>('img[loading="lazy"], iframe[loading="lazy"]'))) element.loading = 'eager';
    return false;
  });
}
