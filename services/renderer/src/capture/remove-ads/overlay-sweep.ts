import type { Page } from 'puppeteer-core';
import { withFloatingElements } from './floating-elements.ts';

/*
 * The generic pass, for what the filter lists and the consent rules left: newsletter modals,
 * paywall and app-install interstitials, homemade cookie walls, the backdrops behind them, and the
 * scroll lock they put on the page.
 */

export interface OverlaySweepResult {
  removed: number;
  unlocked: boolean;
}

export const OVERLAY_LIMITS = {
  /** An overlay covers at least this share of the viewport (or is a dialog); a sticky header or a sidebar covers less. */
  minViewportShare: 0.3,
  /** And sits at this z-index or above (Tailwind's highest utility is z-50; modal libraries use 1000+). */
  minZIndex: 10,
  /** An overlay this large is a backdrop: what floats above it, away from the top edge, is its modal. */
  backdropViewportShare: 0.9,
  /** An element holding at least this share of the page's text is the page itself (an app shell), not an overlay... */
  maxTextShare: 0.5,
  /** ...once the page has at least this much text; a page with little text is mostly its banner's. */
  minPageTextForShare: 500,
} as const;

export function sweepOverlays(page: Page): Promise<OverlaySweepResult> {
  return page.evaluate(withFloatingElements(sweepOverlaysInPage, OVERLAY_LIMITS)) as Promise<OverlaySweepResult>;
}

/**
 * Removes what floats over the page at a high z-index: fixed and sticky elements that cover a large
 * share of the viewport, dialogs (role=dialog, aria-modal, a modal <dialog>), and whatever floats
 * above a full-screen backdrop without being pinned to the top edge like a header. Never an element
 * that holds the page's main content or navigation. Then lifts `overflow: hidden` from html and body.
 * `mayFloat` (floating-elements.ts), in document order, spares it asking every element.
 * Self-contained: it is serialized into the page.
 */
export function sweepOverlaysInPage(limits: typeof OVERLAY_LIMITS, mayFloat?: Element[]): OverlaySweepResult {
  const viewportArea = window.innerWidth * window.innerHeight;
  const body = document.body;
  if (!body || viewportArea === 0) return { removed: 0, unlocked: false };

  // Laid out only for an element that holds enough text to be most of the page's: on a long page,
  // all of its text is not free.
  let pageText: number | undefined;
  const pageTextLength = () => (pageText ??= body.innerText.length);
  const holdsMostOfTheText = (element: HTMLElement) => {
    const length = element.innerText.length;
    return length >= limits.minPageTextForShare * limits.maxTextShare && pageTextLength() >= limits.minPageTextForShare && length >= pageTextLength() * limits.maxTextShare;
  };
  const protectedSelector = 'main, [role="main"], nav, [role="navigation"]';
  const dialogSelector = '[role="dialog"], [role="alertdialog"], [aria-modal="true"]';

  interface Floating {
    element: HTMLElement;
    zIndex: number;
    share: number;
    top: number;
    fixed: boolean;
    topLayer: boolean;
  }

  const describe = (element: HTMLElement): Floating | undefined => {
    const style = getComputedStyle(element);
    const topLayer = element.matches(':modal');
    if (!topLayer && style.position !== 'fixed' && style.position !== 'sticky') return undefined;
    if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return undefined;
    const rect = element.getBoundingClientRect();
    const width = Math.min(rect.right, window.innerWidth) - Math.max(rect.left, 0);
    const height = Math.min(rect.bottom, window.innerHeight) - Math.max(rect.top, 0);
    const share = width > 0 && height > 0 ? (width * height) / viewportArea : 0;
    const zIndex = Number.parseInt(style.zIndex, 10);
    return { element, zIndex: Number.isNaN(zIndex) ? 0 : zIndex, share, top: rect.top, fixed: style.position === 'fixed', topLayer };
  };

  const holdsThePage = (element: HTMLElement) => element.matches(protectedSelector) || element.querySelector(protectedSelector) !== null || holdsMostOfTheText(element);

  // Outermost floating elements only: what is inside an overlay goes with it. An app shell that
  // holds the page is looked into: a modal may float inside it.
  const floating: Floating[] = [];
  const take = (element: HTMLElement): boolean => {
    const found = describe(element);
    if (!found || found.share === 0 || holdsThePage(found.element)) return false;
    floating.push(found);
    return true;
  };
  if (mayFloat) {
    for (const element of mayFloat) {
      if (element === body || !body.contains(element) || floating.some((item) => item.element.contains(element))) continue;
      take(element as HTMLElement);
    }
  } else {
    const walker = document.createTreeWalker(body, NodeFilter.SHOW_ELEMENT, (node) => (take(node as HTMLElement) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP));
    while (walker.nextNode());
  }

  const high = (item: Floating) => item.topLayer || item.zIndex >= limits.minZIndex;
  const overlays = floating.filter(
    (item) => high(item) && (item.topLayer || item.share >= limits.minViewportShare || item.element.matches(dialogSelector)),
  );
  const backdrops = overlays.filter((item) => item.share >= limits.backdropViewportShare);
  if (backdrops.length > 0) {
    const lowestBackdrop = Math.min(...backdrops.map((item) => item.zIndex));
    for (const item of floating) {
      if (!overlays.includes(item) && item.fixed && item.zIndex >= lowestBackdrop && item.top > 0) overlays.push(item);
    }
  }
  for (const { element } of overlays) element.remove();

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
