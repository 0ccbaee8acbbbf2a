import { TimeoutError, type HTTPRequest, type HTTPResponse, type Page } from 'puppeteer-core';
import { CaptureFailed, NavigationTimeout } from '../../../../lib/errors.ts';
import type { CaptureRequest, CaptureResult } from '../renderer.ts';
import { documentHeight, revealLazyContent } from './full-page.ts';
import type { SettleHints } from './settle-hints.ts';
import { NetworkMonitor } from './network-monitor.ts';
import { emulateProfile } from './prepare-page.ts';
import { PROFILES, type Profile } from './profiles.ts';
import { DEFAULT_IMAGE_FORMAT, DEFAULT_IMAGE_QUALITY, readImageSize, type ImageFormat } from './image-formats.ts';
import { printPdf, readPdfPageSize } from './pdf.ts';
import { prepareFrozenMotion, settleFrozenMotion } from './freeze-motion.ts';
import { checkSelectors, elementClip, emulateMedia, hideElements, waitForVisible } from './page-options.ts';
import { sleep } from './sleep.ts';
import { waitAtMost } from './wait-at-most.ts';
import { actOnPage, navigationTarget, prepareVisit } from './visit.ts';
import { smartWait, waitForLoadEvent, type SmartWaitSettings } from './smart-wait.ts';
import { ReportCollector } from '../report/report-collector.ts';
import { phase } from './phase-spans.ts';
import { runJourney, type JourneyGuard, type JourneyOutcome } from './journey.ts';

export interface CaptureLimits {
  /** Until DOMContentLoaded; past it the capture is a 408. */
  navigationTimeoutMs: number;
  /** Cap on a full-page PNG's height in device pixels; see README "Full-page captures". */
  fullPageMaxHeight: number;
  /** A PDF with more pages than this is a 400 (PDF_MAX_PAGES). */
  pdfMaxPages: number;
  smartWait: SmartWaitSettings;
  /** A request open longer than this counts as long-polling, which the smart wait does not wait for. */
  longRequestMs: number;
  settleHints: SettleHints;
}

/**
 * What `removeAds: true` does to a page: set up on the spare page before any capture takes it (it is
 * the default), undone before navigation when the capture has it off, and the cleaning once the page
 * is ready.
 */
export interface PageCleaner {
  preparePage(page: Page): Promise<void>;
  beforeNavigation(page: Page, removeAds: boolean): Promise<void>;
  /** Resolves once what it started by itself while the page loaded (the first cosmetic pass) is done. */
  settled(page: Page): Promise<void>;
  /**
   * Every pass: consent rules, cosmetic filters, notices, overlays. True when it changed the page.
   * `area`: what of the page the picture shows (all of it when absent).
   */
  beforeScreenshot(page: Page, area?: PictureArea): Promise<boolean>;
  /** The passes that cost little (cosmetic filters, notices, overlays), for what appeared since. */
  sweepAgain(page: Page): Promise<boolean>;
}

/** What of the page a picture shows, in CSS pixels. */
export interface PictureArea {
  /** The area starts at the top of the viewport (a viewport capture), else at the top of the document (a full page). */
  fromViewportTop: boolean;
  height: number;
}

/** The area `request`'s picture shows; undefined for an element (anywhere on the page) and a PDF (all of it). */
function pictureArea(request: CaptureRequest, profile: Profile, limits: CaptureLimits): PictureArea | undefined {
  if (request.selector !== undefined || request.format === 'pdf') return undefined;
  if (!request.fullPage) return { fromViewportTop: true, height: profile.viewport.height };
  return { fromViewportTop: false, height: Math.floor(limits.fullPageMaxHeight / profile.viewport.deviceScaleFactor) };
}

/** Shortest cap the hints may set: even a page that was always instant gets this long. */
const MIN_HINTED_WAIT_MS = 1000;

/**
 * Renders one request on a page that belongs to a fresh browser context; with `report`, the page
 * report of the same visit is read once the picture is taken (report/report-collector.ts).
 */
export async function capturePage(
  page: Page,
  request: CaptureRequest,
  limits: CaptureLimits,
  cleaner: PageCleaner | undefined,
  signal?: AbortSignal,
  guard?: JourneyGuard,
): Promise<CaptureResult> {
  const profile = PROFILES[request.quality];
  await emulateProfile(page, profile);
  await checkSelectors(page, request);
  await emulateMedia(page, request);
  await prepareVisit(page, request);
  if (request.freezeMotion) await prepareFrozenMotion(page);
  const report = request.report ? new ReportCollector(page, request, request.report) : undefined;
  const network = new NetworkMonitor(page, { longRequestMs: limits.longRequestMs, ...(report ? { observer: report } : {}) });
  try {
    await report?.prepare();
    const result = await visitAndPicture(page, request, profile, limits, network, cleaner, report, signal, guard);
    return report ? { ...result, report: await report.finish() } : result;
  } finally {
    network.stop();
    report?.stop();
  }
}

async function visitAndPicture(
  page: Page,
  request: CaptureRequest,
  profile: Profile,
  limits: CaptureLimits,
  network: NetworkMonitor,
  cleaner: PageCleaner | undefined,
  report: ReportCollector | undefined,
  signal?: AbortSignal,
  guard?: JourneyGuard,
): Promise<CaptureResult> {
  await cleaner?.beforeNavigation(page, request.removeAds);
  const navigationStarted = performance.now();
  report?.markNavigationStart(navigationStarted);
  await navigate(page, navigationTarget(request), limits.navigationTimeoutMs, signal);
  await actOnPage(page, request, navigationStarted + limits.navigationTimeoutMs, signal);
  // Only a capture with steps pays for them: without, not even an await.
  const journey = request.steps ? await runJourney(page, request.steps, guardOf(guard), signal) : undefined;

  const waitStarted = performance.now();
  if (request.waitForSelector !== undefined) {
    await waitForVisible(page, request.waitForSelector, navigationStarted + limits.navigationTimeoutMs, signal);
  }
  if (takesEarlyPicture(request)) {
    const { image, waitMs } = await earlyPicture(page, request, profile, limits, network, cleaner, waitStarted, signal);
    return withJourney(encodedResult(image, request, false, waitMs), journey);
  }
  await waitUntilReady(page, request, limits, network, waitStarted, signal);
  if (wholeDocument(request)) {
    const maxCssHeight = Math.floor(limits.fullPageMaxHeight / profile.viewport.deviceScaleFactor);
    await revealLazyContent(page, network, limits.smartWait, performance.now() + limits.smartWait.maxMs, maxCssHeight);
    signal?.throwIfAborted();
    await smartWait(page, network, limits.smartWait, performance.now() + 1500, true);
  }
  const waitMs = Math.round(performance.now() - waitStarted);
  signal?.throwIfAborted();

  if (request.removeAds) await cleaner?.beforeScreenshot(page, pictureArea(request, profile, limits));
  if (request.hideSelectors) await hideElements(page, request.hideSelectors);
  if (request.freezeMotion) await settleFrozenMotion(page);
  if (request.format === 'pdf') return withJourney(pdfResult(await printPdf(page, request.pdf, limits.pdfMaxPages), waitMs), journey);
  const { image, truncated } = await screenshot(page, profile, request, limits.fullPageMaxHeight);
  return withJourney(encodedResult(image, request, truncated, waitMs), journey);
}

function withJourney(result: CaptureResult, journey: JourneyOutcome | undefined): CaptureResult {
  return journey ? { ...result, journey } : result;
}

/** A capture with steps is run by the pool, which always gives the guard; without one, no step may navigate anywhere. */
function guardOf(guard: JourneyGuard | undefined): JourneyGuard {
  return (
    guard ?? {
      checkUrl: () => Promise.reject(new Error('no network guard was given to this capture')),
      failure: () => Promise.resolve(undefined),
    }
  );
}

/** A PDF's width and height are its first page's, in CSS pixels; it is never cut (fullPage and selector do not apply). */
function pdfResult(pdf: Buffer, waitMs: number): CaptureResult {
  return { image: pdf, format: 'pdf', ...readPdfPageSize(pdf), fileSize: pdf.byteLength, truncated: false, waitMs };
}

/** The image encoding of a request that takes a screenshot. */
function imageFormatOf(request: CaptureRequest): ImageFormat {
  const format = request.format ?? DEFAULT_IMAGE_FORMAT;
  if (format === 'pdf') throw new Error('a PDF is printed, not encoded as an image');
  return format;
}

function encodedResult(image: Buffer, request: CaptureRequest, truncated: boolean, waitMs: number): CaptureResult {
  const format = imageFormatOf(request);
  const { width, height } = readImageSize(image, format);
  return { image, format, width, height, fileSize: image.byteLength, truncated, waitMs };
}

/** Full page, and a PDF, which always holds the whole page: lazy content is revealed and waited for down to the cap. */
function wholeDocument(request: CaptureRequest): boolean {
  return request.fullPage || request.format === 'pdf';
}

/**
 * A viewport capture on the smart wait: the kind whose picture can be taken while the last calm
 * frames pass. Not a PDF: printing lays the page out again, so it cannot overlap the cleaning. Not
 * with freezeMotion, whose animations must be settled before the picture is taken.
 */
function takesEarlyPicture(request: CaptureRequest): boolean {
  return request.wait === undefined && !request.fullPage && request.selector === undefined && request.format !== 'pdf' && !request.freezeMotion;
}

/**
 * Takes the picture once the page is ready but for its last calm frames, while the cleaning looks at
 * the page, and checks afterwards that nothing changed from the start of the cleaning to the end of
 * the picture: the calm frames and the cleaning pass while Chromium encodes the image, not before it.
 * - The page changed meanwhile: it waits for the calm frames as before, cleans, and takes the picture.
 * - The cleaning changed the page (an ad hidden, a notice answered, hideSelectors): no early picture;
 *   it waits the calm frames' time, cleans what appeared since, and takes the picture.
 */
async function earlyPicture(
  page: Page,
  request: CaptureRequest,
  profile: Profile,
  limits: CaptureLimits,
  network: NetworkMonitor,
  cleaner: PageCleaner | undefined,
  waitStarted: number,
  signal?: AbortSignal,
): Promise<{ image: Buffer; waitMs: number }> {
  const deadline = await waitUntilReady(page, request, limits, network, waitStarted, signal, 0);
  // Its own changes to the page so far are part of the page the cleaning starts from.
  if (request.removeAds) await cleaner?.settled(page);
  const cleaningStarted = performance.now();
  const activity = network.lastActivity;
  // The picture is taken while the cleaning looks at the page: a cleaning that changes nothing leaves
  // the page as it is in the picture, and one that changes something is seen by the check below
  // (its changes are DOM changes after cleaningStarted) as well as by its own answer.
  const picture = request.hideSelectors === undefined ? screenshot(page, profile, request, limits.fullPageMaxHeight) : undefined;
  picture?.catch(() => undefined);
  // The cleaning's scripts start once the renderer has made the frame the picture needs: started
  // first, they held its main thread, and with it the picture, for as long as they ran.
  if (picture && request.removeAds && cleaner) await afterNextFrame(page);
  const area = pictureArea(request, profile, limits);
  const cleaned = (request.removeAds && (await cleaner?.beforeScreenshot(page, area))) || request.hideSelectors !== undefined;
  if (request.hideSelectors) await hideElements(page, request.hideSelectors);
  if (!cleaned && picture) {
    const { image } = await picture;
    if (await unchangedSince(page, network, cleaningStarted, activity, limits.smartWait.calmFrames * FRAME_MS)) {
      return { image, waitMs: Math.round(cleaningStarted - waitStarted) };
    }
  }
  if (cleaned) {
    // The cleaning acted (a banner answered, ads hidden): the page reacts for a while, and waiting for
    // it to be calm again cost the consent corpus about 0.7 s a capture. As before the early picture,
    // the picture comes after the calm frames' time; what appeared in it is cleaned by a second pass.
    // The picture taken meanwhile, if any, is not used, but one picture at a time is taken of a page.
    await Promise.all([sleep(limits.smartWait.calmFrames * FRAME_MS, signal), picture?.catch(() => undefined)]);
  } else {
    await smartWait(page, network, limits.smartWait, deadline, false);
  }
  signal?.throwIfAborted();
  if (request.removeAds) await (cleaned ? cleaner?.sweepAgain(page) : cleaner?.beforeScreenshot(page, area));
  if (request.hideSelectors) await hideElements(page, request.hideSelectors);
  const requested = performance.now();
  const { image } = await screenshot(page, profile, request, limits.fullPageMaxHeight);
  return { image, waitMs: Math.round(requested - waitStarted) };
}

/** Longest wait for the next frame: a page that makes none (hidden, busy, or its timers replaced) is not waited for longer. */
const NEXT_FRAME_MAX_MS = 50;

/** Resolves once the page has made its next frame (its animation frame callbacks, then paint), or after NEXT_FRAME_MAX_MS. */
async function afterNextFrame(page: Page): Promise<void> {
  const frame = page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
  await waitAtMost(NEXT_FRAME_MAX_MS, frame.catch(() => undefined));
}

/** One animation frame at 60 Hz, as the readiness probe counts calm frames. */
const FRAME_MS = 16.7;

/**
 * True when nothing changed since `since` (performance.now() clock): no request started or ended
 * after `activity`, and in every frame no DOM change or layout shift for at least that long, and at
 * least `calmMs`. Measured on the page's clock before the answer reaches us, so it errs towards
 * "changed".
 */
async function unchangedSince(page: Page, network: NetworkMonitor, since: number, activity: number, calmMs: number): Promise<boolean> {
  if (network.lastActivity !== activity || network.pending() > 0) return false;
  // A frame gone or replaced meanwhile changed the picture: 0.
  const quietMs = await Promise.all(page.frames().map((frame) => frame.evaluate(msSinceChangeInPage).catch(() => 0)));
  const needed = Math.max(calmMs, performance.now() - since);
  return quietMs.every((ms) => ms >= needed);
}

/** Runs inside the page: ms since the readiness probe last saw a change (a document without it never changes). */
function msSinceChangeInPage(): number {
  const probe = (window as unknown as Record<string, { msSinceChange(): number } | undefined>)['__viewfinderReadiness'];
  return probe ? probe.msSinceChange() : Number.MAX_SAFE_INTEGER;
}

/**
 * With `wait`: the load event (bounded by the smart-wait cap), then exactly `wait` ms.
 * Without: the smart wait, capped by what past captures of the same page needed; `calmFrames`
 * overrides the settings' (0: ready but for the calm frames). Resolves to the smart wait's deadline.
 */
async function waitUntilReady(
  page: Page,
  request: CaptureRequest,
  limits: CaptureLimits,
  network: NetworkMonitor,
  started: number,
  signal?: AbortSignal,
  calmFrames = limits.smartWait.calmFrames,
): Promise<number> {
  if (request.wait !== undefined) {
    await waitForLoadEvent(page, started + limits.smartWait.maxMs);
    await sleep(request.wait, signal);
    return started + limits.smartWait.maxMs;
  }
  // An html document has no address to learn hints for, and after a journey the page is not the
  // URL's: either gets the full cap, and teaches the hints nothing.
  const hinted = request.html === undefined && request.steps === undefined;
  const deadline = started + (hinted ? limits.settleHints.capFor(request.url, MIN_HINTED_WAIT_MS, limits.smartWait.maxMs) : limits.smartWait.maxMs);
  await smartWait(page, network, { ...limits.smartWait, calmFrames }, deadline, wholeDocument(request));
  if (hinted) limits.settleHints.record(request.url, performance.now() - started);
  signal?.throwIfAborted();
  return deadline;
}

/** renderer.navigation when tracing is on (phase-spans.ts). */
const navigate = phase('renderer.navigation', untracedNavigate);

async function untracedNavigate(page: Page, url: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
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
  const type = imageFormatOf(request);
  return { type, optimizeForSpeed: true, ...(type === 'png' ? {} : { quality: request.imageQuality ?? DEFAULT_IMAGE_QUALITY }) } as const;
}

/** renderer.encode (the picture, taken and encoded by Chromium) when tracing is on (phase-spans.ts). */
const screenshot = phase('renderer.encode', untracedScreenshot);

async function untracedScreenshot(page: Page, profile: Profile, request: CaptureRequest, maxImageHeight: number): Promise<{ image: Buffer; truncated: boolean }> {
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
