import type { Page } from 'puppeteer-core';

/**
 * The generic pass, for what the filter lists and the consent rules left: newsletter modals,
 * paywall and app-install interstitials, homemade cookie walls, the backdrops behind them, and the
 * scroll lock they put on the page.
 */
export interface OverlaySweepResult {
  removed: number;
  unlocked: boolean;
}

export const OVERLAY_LIMITS = {
  /** An overlay covers at least this share of the viewport; a sticky header or a cookie bar covers far less. */
  minViewportShare: 0.3,
  /** And sits at this z-index or above (Tailwind's highest utility is z-50; modal libraries use 1000+). */
  minZIndex: 10,
  /** An element holding at least this share of the page's text is the page itself (an app shell), not an overlay... */
  maxTextShare: 0.5,
  /** ...once the page has at least this much text; a page with little text is mostly its banner's. */
  minPageTextForShare: 500,
} as const;

export function sweepOverlays(page: Page): Promise<OverlaySweepResult> {
  return page.evaluate(sweepOverlaysInPage, OVERLAY_LIMITS);
}

/**
 * Removes fixed and sticky elements that cover a large share of the viewport at a high z-index (or
 * sit in the top layer as a modal dialog), unless they hold the page's main content or navigation;
 * then lifts `overflow: hidden` from html and body. Self-contained: it is serialized into the page.
 */
export function sweepOverlaysInPage(limits: typeof OVERLAY_LIMITS): OverlaySweepResult {
  const viewportArea = window.innerWidth * window.innerHeight;
  const body = document.body;
  if (!body || viewportArea === 0) return { removed: 0, unlocked: false };

  const pageText = body.innerText.length;
  const protectedSelector = 'main, [role="main"], nav, [role="navigation"]';

  const coveredShare = (element: Element) => {
    const rect = element.getBoundingClientRect();
    const width = Math.min(rect.right, window.innerWidth) - Math.max(rect.left, 0);
    const height = Math.min(rect.bottom, window.innerHeight) - Math.max(rect.top, 0);
    return width > 0 && height > 0 ? (width * height) / viewportArea : 0;
  };

  const isOverlay = (element: HTMLElement, style: CSSStyleDeclaration) => {
    const inTopLayer = element.matches(':modal');
    if (!inTopLayer && style.position !== 'fixed' && style.position !== 'sticky') return false;
    if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false;
    if (!inTopLayer && !(Number.parseInt(style.zIndex, 10) >= limits.minZIndex)) return false;
    if (coveredShare(element) < limits.minViewportShare) return false;
    if (element.matches(protectedSelector) || element.querySelector(protectedSelector)) return false;
    if (pageText >= limits.minPageTextForShare && element.innerText.length >= pageText * limits.maxTextShare) return false;
    return true;
  };

  const overlays: HTMLElement[] = [];
  // FILTER_REJECT skips an overlay's subtree (it goes as a whole); FILTER_SKIP walks on into children.
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_ELEMENT, (node) => {
    const element = node as HTMLElement;
    if (!isOverlay(element, getComputedStyle(element))) return NodeFilter.FILTER_SKIP;
    overlays.push(element);
    return NodeFilter.FILTER_REJECT;
  });
  while (walker.nextNode());
  for (const overlay of overlays) overlay.remove();

  let unlocked = false;
  for (const element of [document.documentElement, body]) {
    const overflowY = getComputedStyle(element).overflowY;
    if (overflowY === 'hidden' || overflowY === 'clip') {
      element.style.setProperty('overflow-y', 'visible', 'important');
      unlocked = true;
    }
  }
  return { removed: overlays.length, unlocked };
}
