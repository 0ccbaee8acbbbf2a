import { TimeoutError, type HTTPRequest, type HTTPResponse, type Page } from 'puppeteer-core';
import { CaptureFailed, NavigationTimeout } from '../../../../lib/errors.ts';
import type { CaptureRequest, CaptureResult } from '../renderer.ts';
import { documentHeight, revealLazyContent } from './full-page.ts';
import type { SettleHints } from './settle-hints.ts';
import { NetworkMonitor } from './network-monitor.ts';
import { emulateProfile } from './prepare-page.ts';
import { PROFILES, type Profile } from './profiles.ts';
import { DEFAULT_IMAGE_FORMAT, DEFAULT_IMAGE_QUALITY, readImageSize } from './image-formats.ts';
import { checkSelectors, elementClip, emulateMedia, hideElements, waitForVisible } from './page-options.ts';
import { sleep } from './sleep.ts';
import { smartWait, waitForLoadEvent, type SmartWaitSettings } from './smart-wait.ts';

export interface CaptureLimits {
  /** Until DOMContentLoaded; past it the capture is a 408. */
  navigationTimeoutMs: number;
  /** Cap on a full-page PNG's height in device pixels; see README "Full-page captures". */
  fullPageMaxHeight: number;
  smartWait: SmartWaitSettings;
  /** A request open longer than this counts as long-polling, which the smart wait does not wait for. */
  longRequestMs: number;
  settleHints: SettleHints;
}

/** What `removeAds: true` does to a page: set up before navigation, clean up once it is ready. */
export interface PageCleaner {
  beforeNavigation(page: Page): Promise<void>;
  beforeScreenshot(page: Page): Promise<void>;
}

/** Shortest cap the hints may set: even a page that was always instant gets this long. */
const MIN_HINTED_WAIT_MS = 1000;

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
  await checkSelectors(page, request);
  await emulateMedia(page, request);
  const network = new NetworkMonitor(page, { longRequestMs: limits.longRequestMs });
  try {
    if (request.removeAds) await cleaner?.beforeNavigation(page);
    const navigationStarted = performance.now();
    await navigate(page, request.url, limits.navigationTimeoutMs, signal);

    const waitStarted = performance.now();
    if (request.waitForSelector !== undefined) {
      await waitForVisible(page, request.waitForSelector, navigationStarted + limits.navigationTimeoutMs, signal);
    }
    await waitUntilReady(page, request, limits, network, waitStarted, signal);
    if (request.fullPage) {
      const maxCssHeight = Math.floor(limits.fullPageMaxHeight / profile.viewport.deviceScaleFactor);
      await revealLazyContent(page, network, limits.smartWait, performance.now() + limits.smartWait.maxMs, maxCssHeight);
      signal?.throwIfAborted();
      await smartWait(page, network, limits.smartWait, performance.now() + 1500, true);
    }
    const waitMs = Math.round(performance.now() - waitStarted);
    signal?.throwIfAborted();

    if (request.removeAds) await cleaner?.beforeScreenshot(page);
    if (request.hideSelectors) await hideElements(page, request.hideSelectors);
    const { image, truncated } = await screenshot(page, profile, request, limits.fullPageMaxHeight);
    const format = request.format ?? DEFAULT_IMAGE_FORMAT;
    const { width, height } = readImageSize(image, format);
    return { image, format, width, height, fileSize: image.byteLength, truncated, waitMs };
  } finally {
    network.stop();
  }
}

/**
 * With `wait`: the load event (bounded by the smart-wait cap), then exactly `wait` ms.
 * Without: the smart wait, capped by what past captures of the same page needed.
 */
async function waitUntilReady(
  page: Page,
  request: CaptureRequest,
  limits: CaptureLimits,
  network: NetworkMonitor,
  started: number,
  signal?: AbortSignal,
): Promise<void> {
  if (request.wait !== undefined) {
    await waitForLoadEvent(page, started + limits.smartWait.maxMs);
    await sleep(request.wait, signal);
    return;
  }
  const cap = limits.settleHints.capFor(request.url, MIN_HINTED_WAIT_MS, limits.smartWait.maxMs);
  await smartWait(page, network, limits.smartWait, started + cap, request.fullPage);
  limits.settleHints.record(request.url, performance.now() - started);
  signal?.throwIfAborted();
}

async function navigate(page: Page, url: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const navigation = watchNavigationRequest(page);
  try {
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (err instanceof TimeoutError) throw new NavigationTimeout();
    if (signal?.aborted) throw signal.reason;
    const netError = /net::ERR_[A-Z_]+/.exec(String((err as Error)?.message))?.[0];
    // An aborted navigation is often a download or a type Chromium won't show; its headers say which.
    const response = netError === 'net::ERR_ABORTED' ? await navigation.failedResponse(ABORT_DETAILS_WAIT_MS) : null;
    throw new CaptureFailed(`Screenshot generation failed${describeFailure(netError, response)}`);
  } finally {
    navigation.stop();
  }
}

/** How long to wait for the headers of an aborted navigation; Chromium reports them after goto fails. */
const ABORT_DETAILS_WAIT_MS = 1000;

/** Follows the main navigation request, whose failure Chromium reports only after goto has rejected. */
function watchNavigationRequest(page: Page) {
  let failed: HTTPRequest | undefined;
  let wake: (() => void) | undefined;
  const isMainNavigation = (request: HTTPRequest) => {
    const frame = request.frame(); // a download belongs to no frame
    return request.isNavigationRequest() && (frame === null || frame === page.mainFrame());
  };
  const onFailed = (request: HTTPRequest) => {
    if (!isMainNavigation(request)) return;
    failed = request;
    wake?.();
  };
  page.on('requestfailed', onFailed);
  return {
    async failedResponse(waitMs: number): Promise<HTTPResponse | null> {
      if (!failed) await new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, waitMs)));
      return failed?.response() ?? null;
    },
    stop: () => page.off('requestfailed', onFailed),
  };
}

/** Why a navigation failed, in words a client can act on; empty when Chromium gave no reason. */
function describeFailure(netError: string | undefined, response: HTTPResponse | null): string {
  if (netError === 'net::ERR_ABORTED' && response) {
    const headers = response.headers();
    if (/^\s*attachment/i.test(headers['content-disposition'] ?? '')) {
      return ': the URL is a download (Content-Disposition: attachment), not a page';
    }
    const type = (headers['content-type'] ?? 'an unknown type').split(';')[0];
    return `: the URL answered with ${type}, which Chromium does not render as a page`;
  }
  return netError ? `: ${netError}` : '';
}

/** The encoder settings of a request: PNG as always, or JPEG/WebP at the requested quality. */
function encoding(request: CaptureRequest) {
  const type = request.format ?? DEFAULT_IMAGE_FORMAT;
  return { type, optimizeForSpeed: true, ...(type === 'png' ? {} : { quality: request.imageQuality ?? DEFAULT_IMAGE_QUALITY }) } as const;
}

async function screenshot(page: Page, profile: Profile, request: CaptureRequest, maxImageHeight: number): Promise<{ image: Buffer; truncated: boolean }> {
  const maxCssHeight = Math.floor(maxImageHeight / profile.viewport.deviceScaleFactor);
  if (request.selector !== undefined) {
    // An element taller than the full-page cap is cut there, as a full page would be.
    const clip = await elementClip(page, request.selector);
    const image = await page.screenshot({ ...encoding(request), captureBeyondViewport: true, clip: { ...clip, height: Math.min(clip.height, maxCssHeight) } });
    return { image: Buffer.from(image), truncated: clip.height > maxCssHeight };
  }
  if (!request.fullPage) {
    const bytes = await page.screenshot(encoding(request));
    return { image: Buffer.from(bytes), truncated: false };
  }
  const pageHeight = await documentHeight(page);
  const height = Math.min(pageHeight, maxCssHeight);
  const bytes = await page.screenshot({
    ...encoding(request),
    captureBeyondViewport: true,
    clip: { x: 0, y: 0, width: profile.viewport.width, height },
  });
  return { image: Buffer.from(bytes), truncated: pageHeight > maxCssHeight };
}
