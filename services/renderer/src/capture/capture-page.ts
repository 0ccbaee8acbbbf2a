import { TimeoutError, type Page } from 'puppeteer-core';
import { CaptureFailed, NavigationTimeout } from '../../../../lib/errors.ts';
import type { CaptureRequest, CaptureResult } from '../renderer.ts';
import { PROFILES, type Profile } from './profiles.ts';
import { readPngSize } from './png.ts';
import { settle } from './settle.ts';
import { sleep } from './sleep.ts';

export interface CaptureLimits {
  navigationTimeoutMs: number;
  /** Cap on a full-page PNG's height in device pixels; see README "Full-page captures". */
  fullPageMaxHeight: number;
}

/** What `removeAds: true` does to a page: set up before navigation, clean up once it is ready. */
export interface PageCleaner {
  beforeNavigation(page: Page): Promise<void>;
  beforeScreenshot(page: Page): Promise<void>;
}

/** The profile each warm page currently emulates, so that a page already at the right one is not reset. */
const emulatedProfiles = new WeakMap<Page, Profile>();

export async function emulateProfile(page: Page, profile: Profile): Promise<void> {
  const current = emulatedProfiles.get(page);
  if (current === profile) return;
  await page.setViewport(profile.viewport);
  if (profile.userAgent !== current?.userAgent) {
    await page.setUserAgent({ userAgent: profile.userAgent ?? (await page.browser().userAgent()) });
  }
  emulatedProfiles.set(page, profile);
}

/** Renders one request on a page that belongs to a fresh browser context. */
export async function capturePage(
  page: Page,
  request: CaptureRequest,
  limits: CaptureLimits,
  cleaner: PageCleaner | undefined,
  signal?: AbortSignal,
): Promise<CaptureResult> {
  const profile = PROFILES[request.quality];
  await emulateProfile(page, profile);
  if (request.removeAds) await cleaner?.beforeNavigation(page);
  await navigate(page, request.url, limits.navigationTimeoutMs, signal);

  const waitStarted = performance.now();
  if (request.wait !== undefined) {
    await sleep(request.wait, signal);
  } else {
    await settle(page);
  }
  const waitMs = Math.round(performance.now() - waitStarted);
  if (request.removeAds) await cleaner?.beforeScreenshot(page);

  const { png, truncated } = await screenshot(page, profile, request.fullPage, limits.fullPageMaxHeight);
  const { width, height } = readPngSize(png);
  return { png, width, height, fileSize: png.byteLength, truncated, waitMs };
}

async function navigate(page: Page, url: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  try {
    await page.goto(url, { waitUntil: 'load', timeout: timeoutMs, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (err instanceof TimeoutError) throw new NavigationTimeout();
    if (signal?.aborted) throw signal.reason;
    // Chromium's net error code (net::ERR_NAME_NOT_RESOLVED, ...) tells the client what went wrong.
    const netError = /net::ERR_[A-Z_]+/.exec(String((err as Error)?.message))?.[0];
    throw new CaptureFailed(netError ? `Screenshot generation failed: ${netError}` : undefined);
  }
}

async function screenshot(page: Page, profile: Profile, fullPage: boolean, maxImageHeight: number): Promise<{ png: Buffer; truncated: boolean }> {
  if (!fullPage) {
    const png = await page.screenshot({ type: 'png', optimizeForSpeed: true });
    return { png: Buffer.from(png), truncated: false };
  }
  const documentHeight = await page.evaluate(() =>
    Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, window.innerHeight),
  );
  const maxCssHeight = Math.floor(maxImageHeight / profile.viewport.deviceScaleFactor);
  const height = Math.min(documentHeight, maxCssHeight);
  const png = await page.screenshot({
    type: 'png',
    optimizeForSpeed: true,
    captureBeyondViewport: true,
    clip: { x: 0, y: 0, width: profile.viewport.width, height },
  });
  return { png: Buffer.from(png), truncated: documentHeight > maxCssHeight };
}
