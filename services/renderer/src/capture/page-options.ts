/**
 * The capture options beyond the spec that act on the page: selectors (checked, waited for, hidden,
 * captured) and media emulation. Each does nothing when its option is absent, so a request with only
 * the spec's fields renders exactly as before.
 */
import { TimeoutError, type Page } from 'puppeteer-core';
import { BadRequest, NavigationTimeout } from '../../../../lib/errors.ts';
import type { CaptureRequest } from '../renderer.ts';
import { stepSelectors } from './journey-steps.ts';

/** The CSS selectors of a request, each named as the client wrote the field, for error messages. */
function selectorsOf(request: CaptureRequest): { field: string; selector: string }[] {
  return [
    ...(request.selector !== undefined ? [{ field: 'selector', selector: request.selector }] : []),
    ...(request.waitForSelector !== undefined ? [{ field: 'waitForSelector', selector: request.waitForSelector }] : []),
    ...(request.click !== undefined ? [{ field: 'click', selector: request.click }] : []),
    ...(request.hideSelectors ?? []).map((selector, i) => ({ field: `hideSelectors[${i}]`, selector })),
    ...stepSelectors(request.steps),
  ];
}

/**
 * Before navigation: a selector the browser cannot parse is the client's mistake (400), found before
 * any time is spent loading the page. The browser is the judge, so the API accepts exactly the CSS
 * that Chromium does, and nothing of puppeteer's own selector extensions.
 */
export async function checkSelectors(page: Page, request: CaptureRequest): Promise<void> {
  const named = selectorsOf(request);
  if (named.length === 0) return;
  const valid = await page.evaluate(
    (selectors: string[]) =>
      selectors.map((selector) => {
        try {
          document.createDocumentFragment().querySelector(selector);
          return true;
        } catch {
          return false;
        }
      }),
    named.map((n) => n.selector),
  );
  const invalid = named.filter((_, i) => !valid[i]);
  if (invalid.length > 0) {
    throw new BadRequest(invalid.map(({ field, selector }) => `${field} is not a valid CSS selector: ${JSON.stringify(selector)}`).join('; '));
  }
}

/** darkMode and reducedMotion (which freezeMotion implies), set before navigation so that the page's first paint already sees them. */
export async function emulateMedia(page: Page, request: CaptureRequest): Promise<void> {
  const features = [
    ...(request.darkMode ? [{ name: 'prefers-color-scheme', value: 'dark' }] : []),
    ...(request.reducedMotion || request.freezeMotion ? [{ name: 'prefers-reduced-motion', value: 'reduce' }] : []),
  ];
  if (features.length > 0) await page.emulateMediaFeatures(features);
}

/**
 * Waits until an element matching `selector` is visible (a box with a size, and not
 * visibility: hidden), until `deadline`; past it the capture is a 408 that names the selector.
 */
export async function waitForVisible(page: Page, selector: string, deadline: number, signal?: AbortSignal, field = 'waitForSelector'): Promise<void> {
  const timeout = Math.max(1, Math.round(deadline - performance.now()));
  try {
    await page.waitForFunction(
      (css: string) => {
        const element = document.querySelector(css);
        if (!element) return false;
        const box = element.getBoundingClientRect();
        return box.width > 0 && box.height > 0 && getComputedStyle(element).visibility !== 'hidden';
      },
      { timeout, polling: 100, ...(signal ? { signal } : {}) },
      selector,
    );
  } catch (err) {
    if (err instanceof TimeoutError) {
      throw new NavigationTimeout(`Navigation timeout: no element matching ${field} ${JSON.stringify(selector)} became visible within the navigation timeout`);
    }
    throw err;
  }
}

/** hideSelectors: every matching element is taken out of the picture (display: none), right before it is taken. */
export async function hideElements(page: Page, selectors: string[]): Promise<void> {
  if (selectors.length === 0) return;
  await page.evaluate((list: string[]) => {
    for (const selector of list) {
      document.querySelectorAll(selector).forEach((element) => (element as HTMLElement).style?.setProperty('display', 'none', 'important'));
    }
  }, selectors);
}

export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The page area of the first element matching `selector`, in CSS pixels; a missing or empty element is a 400. */
export async function elementClip(page: Page, selector: string): Promise<Clip> {
  const box = await page.evaluate((css: string) => {
    const element = document.querySelector(css);
    if (!element) return null;
    const rect = element.getBoundingClientRect();
    return { x: rect.left + window.scrollX, y: rect.top + window.scrollY, width: rect.width, height: rect.height };
  }, selector);
  if (!box) throw new BadRequest(`No element matches selector ${JSON.stringify(selector)}`);
  if (box.width < 1 || box.height < 1) throw new BadRequest(`The element matching selector ${JSON.stringify(selector)} has no size (${box.width}x${box.height})`);
  return box;
}
