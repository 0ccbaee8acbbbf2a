/**
 * The renderer's contract. The API talks to a Renderer, whether it runs in-process (the pool in
 * pool.ts) or behind HTTP (services/api/src/remote-renderer.ts): every field here is plain data so that it crosses a wire as is.
 */
import type { CaptureFormat } from './capture/image-formats.ts';
import type { PdfOptions } from './capture/pdf.ts';
import type { ProfileName } from './capture/profiles.ts';
import type { UpstreamTiming } from '../../../lib/http/server-timing.ts';
import type { PageReport, ReportRequest } from './report/page-report.ts';
import type { JourneyStep } from './capture/journey-steps.ts';
import type { JourneyOutcome } from './capture/journey.ts';

export interface CaptureRequest {
  /** The page to load; HTML_DOCUMENT_URL when `html` is given instead. */
  url: string;
  quality: ProfileName;
  /** Extra wait in ms after load (1000..8000). Absent: the service decides when the page is ready. */
  wait?: number;
  fullPage: boolean;
  removeAds: boolean;
  /**
   * A restricted key's allowed domains (normalized, as lib/domains.ts keeps them): every page the
   * main frame loads must be on one of them or a subdomain, or the capture is a 403 (see
   * guard/domain-scope.ts). Absent for unrestricted keys and in self-hosted mode.
   */
  allowedDomains?: string[];
  // Options beyond the spec (docs/capture-options.md): each is absent unless the client gave it, so a
  // request with only the spec's fields crosses the wire exactly as before.
  /** Absent: png. pdf prints the page instead of a screenshot (capture/pdf.ts). */
  format?: CaptureFormat;
  /** Only with format pdf; its defaults are applied by the renderer (resolvePdfOptions). */
  pdf?: PdfOptions;
  /** 1..100, jpeg and webp only. Absent: DEFAULT_IMAGE_QUALITY. */
  imageQuality?: number;
  /** Capture only the first element that matches this CSS selector (never with fullPage). */
  selector?: string;
  /** Wait until an element matching this CSS selector is visible, within the navigation timeout. */
  waitForSelector?: string;
  /** Elements matching any of these CSS selectors are hidden (display: none) before the screenshot. */
  hideSelectors?: string[];
  /** Emulate prefers-color-scheme: dark. */
  darkMode?: boolean;
  /** Emulate prefers-reduced-motion: reduce. */
  reducedMotion?: boolean;
  /** A document to render instead of loading `url`: shown at an opaque origin (a data: URL), behind the same guard. */
  html?: string;
  /** Replaces the profile's user agent. */
  userAgent?: string;
  /** Extra request headers, sent only to the origin of `url` (page-session.ts). */
  headers?: Record<string, string>;
  /** Host-only cookies of the host of `url`. */
  cookies?: CaptureCookie[];
  /** An Authorization header, sent only to the origin of `url`. */
  authorization?: CaptureAuthorization;
  /** CSS installed in the top document from its start. */
  injectCss?: string;
  /** A script run in the page once it has loaded (DOMContentLoaded), awaited; bounded by the capture deadline. */
  injectJs?: string;
  /** A CSS selector whose element is clicked once the page has loaded, before the wait. */
  click?: string;
  /** Kinds of subresources that are never loaded. */
  blockResources?: BlockedResource[];
  /** URL patterns (`*` is the only wildcard) that are never loaded. */
  blockUrls?: string[];
  /** An IANA time zone (Europe/Paris). */
  timezone?: string;
  /** A BCP 47 language tag: Accept-Language, navigator.language and Intl's default. */
  locale?: string;
  /** A position the page may read, with the permission granted. */
  geolocation?: CaptureGeolocation;
  /**
   * Internal, set by page monitors' runs and never by a client: freeze what moves (animations,
   * transitions, caret, smooth scrolling) so that an unchanged page gives the same pixels (freeze-motion.ts).
   */
  freezeMotion?: boolean;
  /**
   * Collect the page report in the same visit (report/page-report.ts). Absent: nothing of it runs,
   * no listener and no DevTools call.
   */
  report?: ReportRequest;
  /**
   * A journey: actions done in order once the page has loaded, before the wait and the picture
   * (capture/journey.ts). Every fill carries its value (the API resolved valueFrom): a secret.
   */
  steps?: JourneyStep[];
}

/** What `url` holds for a capture of `html`: the document has no address of its own. */
export const HTML_DOCUMENT_URL = 'about:blank';

export const BLOCKED_RESOURCES = ['images', 'fonts', 'media', 'scripts'] as const;
export type BlockedResource = (typeof BLOCKED_RESOURCES)[number];

export interface CaptureCookie {
  name: string;
  value: string;
}

export type CaptureAuthorization = { type: 'basic'; username: string; password: string } | { type: 'bearer'; token: string };

export interface CaptureGeolocation {
  latitude: number;
  longitude: number;
  /** Metres; 0 when absent. */
  accuracy?: number;
}

export interface CaptureResult {
  /** The encoded image, or the PDF, in `format`. */
  image: Buffer;
  format: CaptureFormat;
  /** Read from the encoded image's own header, never copied from the profile; a PDF's first page, in CSS px. */
  width: number;
  height: number;
  fileSize: number;
  /** True when a full-page capture was cut at the height cap. */
  truncated: boolean;
  /** How long the service waited after the load event before taking the picture. */
  waitMs: number;
  /** Only when the request asked for a report. */
  report?: PageReport;
  /** Only when the request had steps: what each did, and the pictures of its capture steps. */
  journey?: JourneyOutcome;
}

export interface CaptureOptions {
  /** Aborts a queued or running capture, e.g. when the client goes away. */
  signal?: AbortSignal;
  /** The request's id, sent on to a remote renderer so that both services log the same one. */
  requestId?: string;
  /** A remote renderer adds its time on the wire here (the API's Server-Timing); an in-process one has none. */
  timing?: UpstreamTiming;
}

/** A point-in-time view of the pool, for /metrics and for capacity decisions. */
export interface RendererStats {
  /** Captures that can run at once. */
  capacity: number;
  /** Captures running now. */
  inFlight: number;
  /** Captures admitted and waiting for a slot. */
  queued: number;
  /** Chromium launches after the first, for any reason (crash, recycle). */
  browserRestarts: number;
  /** Chromium exits nobody asked for. */
  browserCrashes: number;
}

export interface Renderer {
  capture(request: CaptureRequest, options?: CaptureOptions): Promise<CaptureResult>;
  /** True once a browser is up and a warm context is ready for the first capture. */
  isReady(): boolean;
  stats(): RendererStats;
  /** Finishes the captures in flight, then closes Chromium. */
  close(): Promise<void>;
}
