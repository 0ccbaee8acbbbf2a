/**
 * `freezeMotion`, an internal option that page monitors set so that the same unchanged page gives
 * the same pixels run after run: no transition plays, no caret blinks, smooth scrolling is instant
 * (a stylesheet installed before the page's first script), and right before the picture every
 * animation is put in a state that does not depend on when the picture is taken: finite ones at
 * their end, infinite ones cancelled (back to the element's own style), SVG animations at time 0,
 * videos paused. What script draws on a timer (a clock, a canvas) still moves: monitors hide it with
 * hideSelectors or ignoreRegions. Nothing here runs unless the request asks for it.
 */
import type { Page } from 'puppeteer-core';

const FROZEN_CSS = `*, *::before, *::after {
  transition: none !important;
  caret-color: transparent !important;
  scroll-behavior: auto !important;
}`;

/** Runs in every document of the page from its start; adopted sheets need no <head> to exist yet. */
function installFrozenStyle(css: string): void {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  (window as unknown as Record<string, CSSStyleSheet>)['__viewfinderFrozenStyle'] = sheet;
}

/** Before navigation. */
export async function prepareFrozenMotion(page: Page): Promise<void> {
  await page.evaluateOnNewDocument(installFrozenStyle, FROZEN_CSS);
}

/** Runs in the page right before the picture (and again if the page replaced its adopted sheets). */
function settleMotion(css: string): void {
  const sheet = (window as unknown as Record<string, CSSStyleSheet | undefined>)['__viewfinderFrozenStyle'];
  if (!sheet || !document.adoptedStyleSheets.includes(sheet)) {
    const again = new CSSStyleSheet();
    again.replaceSync(css);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, again];
  }
  for (const animation of document.getAnimations()) {
    try {
      if (animation.effect?.getComputedTiming().endTime === Infinity) animation.cancel();
      else animation.finish();
    } catch {
      animation.cancel();
    }
  }
  for (const svg of Array.from(document.querySelectorAll('svg'))) {
    svg.pauseAnimations();
    svg.setCurrentTime(0);
  }
  for (const media of Array.from(document.querySelectorAll('video'))) media.pause();
}

/** Right before the picture, in every frame that still answers. */
export async function settleFrozenMotion(page: Page): Promise<void> {
  await Promise.all(page.frames().map((frame) => frame.evaluate(settleMotion, FROZEN_CSS).catch(() => undefined)));
}
