/**
 * The request and response types of the API, written after its OpenAPI document
 * (GET /api/openapi.json). Each object type has a field list beside it, built by `fields<T>()` so
 * that the compiler holds the list and the type to the same names; test/contract.test.ts compares
 * the lists (and the enums) with the live document, so a field the API gains or loses without this
 * file fails the tests.
 */

type FieldSet<T> = { readonly [K in keyof Required<T>]: true };
/** The names of T's fields; the object literal must name every field of T and nothing else. */
function fields<T>(set: FieldSet<T>): readonly (keyof T & string)[] {
  return Object.keys(set) as (keyof T & string)[];
}

// Enums, as lists (the tests compare them with the document) and as types.
export const QUALITIES = ['standard', 'high', 'retina', 'mobile'] as const;
export type Quality = (typeof QUALITIES)[number];
export const FORMATS = ['png', 'jpeg', 'webp', 'pdf'] as const;
export type Format = (typeof FORMATS)[number];
export const PAPERS = ['A4', 'Letter', 'Legal'] as const;
export const MEDIA_TYPES = ['print', 'screen'] as const;
export const BLOCKED_RESOURCES = ['images', 'fonts', 'media', 'scripts'] as const;
export type BlockedResource = (typeof BLOCKED_RESOURCES)[number];
export const CAPTURE_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type CaptureState = (typeof CAPTURE_STATES)[number];
export const WEBHOOK_STATES = ['pending', 'delivered', 'failed'] as const;
export const KEY_KINDS = ['full', 'site'] as const;
export const MANAGED_KINDS = ['Site', 'ApiKey', 'PageMonitor'] as const;
export const BASELINE_MODES = ['accepted', 'previous'] as const;
export const RUN_TRIGGERS = ['schedule', 'manual'] as const;
export const PAGE_OUTCOMES = ['unchanged', 'changed', 'baseline', 'failed'] as const;

/** A length with a unit: px, in, cm or mm, e.g. "210mm". */
export type Length = string;

export interface PdfMargin {
  top?: Length;
  right?: Length;
  bottom?: Length;
  left?: Length;
}
export const PDF_MARGIN_FIELDS = fields<PdfMargin>({ top: true, right: true, bottom: true, left: true });

/** Options of `format: "pdf"` (docs/capture-options.md). */
export interface PdfOptions {
  paper?: (typeof PAPERS)[number];
  width?: Length;
  height?: Length;
  landscape?: boolean;
  margin?: PdfMargin;
  printBackground?: boolean;
  /** One-based pages and ranges, e.g. "1-3, 5, 8-". */
  pageRanges?: string;
  emulateMedia?: (typeof MEDIA_TYPES)[number];
}
export const PDF_FIELDS = fields<PdfOptions>({
  paper: true, width: true, height: true, landscape: true, margin: true, printBackground: true, pageRanges: true, emulateMedia: true,
});

export interface Geolocation {
  latitude: number;
  longitude: number;
  /** Metres. */
  accuracy?: number;
}
export const GEOLOCATION_FIELDS = fields<Geolocation>({ latitude: true, longitude: true, accuracy: true });

export interface Cookie {
  name: string;
  value: string;
}
export const COOKIE_FIELDS = fields<Cookie>({ name: true, value: true });

export type Authorization = { type: 'basic'; username: string; password: string } | { type: 'bearer'; token: string };
type AllAuthorizationFields = { type: string; username: string; password: string; token: string };
export const AUTHORIZATION_FIELDS = fields<AllAuthorizationFields>({ type: true, username: true, password: true, token: true });

/** How the page is visited: shared by captures and monitor pages (docs/capture-options.md). */
export interface VisitOptions {
  userAgent?: string;
  injectCss?: string;
  injectJs?: string;
  /** A CSS selector clicked once the page has loaded. */
  click?: string;
  blockResources?: BlockedResource[];
  blockUrls?: string[];
  /** An IANA time zone, e.g. Europe/Paris. */
  timezone?: string;
  /** A BCP 47 tag, e.g. fr-FR. */
  locale?: string;
  geolocation?: Geolocation;
}

/** Credentials sent to the page's own origin only; write-only (never in an answer). */
export interface PageCredentials {
  headers?: Record<string, string>;
  cookies?: Cookie[];
  authorization?: Authorization;
}
export const PAGE_CREDENTIALS_FIELDS = fields<PageCredentials>({ headers: true, cookies: true, authorization: true });

/** A monitor page's write-only credentials: a capture's, and the named `values` its fill steps take with `valueFrom` (a password). */
export interface MonitorPageCredentials extends PageCredentials {
  values?: Record<string, string>;
}
export const MONITOR_PAGE_CREDENTIALS_FIELDS = fields<MonitorPageCredentials>({ headers: true, cookies: true, authorization: true, values: true });

/**
 * One step of a journey (docs/capture-options.md, "steps"): `action` and the fields it takes. A
 * fill's `value` and `credentials` are write-only.
 */
export type JourneyStep = { timeout?: number } & (
  | { action: 'goto'; url: string }
  | { action: 'fill'; selector: string; value: string }
  | { action: 'fill'; selector: string; valueFrom: string }
  | { action: 'click' | 'check' | 'uncheck' | 'hover'; selector: string }
  | { action: 'press'; key: string; selector?: string }
  | { action: 'select'; selector: string; value: string }
  | { action: 'select'; selector: string; values: string[] }
  | { action: 'scroll'; selector: string }
  | { action: 'scroll'; x?: number; y?: number }
  | { action: 'waitFor'; selector: string; state?: 'visible' | 'hidden' }
  | { action: 'waitFor'; url: string }
  | { action: 'waitFor'; networkIdle: true }
  | { action: 'capture'; name: string }
);

/**
 * The body of `POST /api/screenshot` (hosted) and `POST /screenshot` (self-hosted): every
 * documented option. Give `url` or `html`, not both.
 */
export interface CaptureOptions extends VisitOptions, PageCredentials {
  /** An http or https URL (or give `html`). */
  url?: string;
  /** An HTML document to capture instead of a URL. */
  html?: string;
  quality?: Quality;
  /** Milliseconds to wait after the load event, 1000 to 8000; without it the smart wait decides. */
  wait?: number;
  fullPage?: boolean;
  removeAds?: boolean;
  format?: Format;
  pdf?: PdfOptions;
  /** 1 to 100, jpeg and webp only. */
  imageQuality?: number;
  selector?: string;
  waitForSelector?: string;
  hideSelectors?: string[];
  darkMode?: boolean;
  reducedMotion?: boolean;
  /** Seconds a stored result may answer this same request, 0 to 2592000. */
  cacheTtl?: number;
  /** Hosted mode: the site the capture counts against (required with a full-access key, unless the client has a `siteId`). */
  site_id?: string;
  /** A journey: up to 50 steps done after the page has loaded, before the picture. */
  steps?: JourneyStep[];
  /** Named secrets that fill steps type with `valueFrom`; write-only. */
  credentials?: Record<string, string>;
  /** Write the capture to a storage destination (hosted: registered to the account; self-hosted: one of STORAGE_DESTINATIONS); the answer then says where it is instead of carrying the image. */
  storage?: StorageOption;
}
export const CAPTURE_OPTION_FIELDS = fields<CaptureOptions>({
  url: true, html: true, quality: true, wait: true, fullPage: true, removeAds: true, format: true, pdf: true, imageQuality: true,
  selector: true, waitForSelector: true, hideSelectors: true, darkMode: true, reducedMotion: true, cacheTtl: true, site_id: true, storage: true,
  userAgent: true, injectCss: true, injectJs: true, click: true, blockResources: true, blockUrls: true, timezone: true, locale: true,
  geolocation: true, headers: true, cookies: true, authorization: true, steps: true, credentials: true,
});

/** `storage` on a capture (docs/storage.md): a destination by name, never its credentials. */
export interface StorageOption {
  destination: string;
  /** This capture's key template instead of the destination's: {id}, {date}, {format}. */
  key?: string;
  /** Also answer a presigned GET URL valid this many seconds (1 to 604800). */
  presign?: number;
}
export const STORAGE_OPTION_FIELDS = fields<StorageOption>({ destination: true, key: true, presign: true });

/** Where a capture with `storage` was written. */
export interface StoredObject {
  destination: string;
  bucket: string;
  key: string;
  /** Unsigned: readable only as the bucket's own policy allows. */
  url: string;
  etag?: string;
  presignedUrl?: string;
  presignedUrlExpiresAt?: string;
}
export const STORED_OBJECT_FIELDS = fields<StoredObject>({ destination: true, bucket: true, key: true, url: true, etag: true, presignedUrl: true, presignedUrlExpiresAt: true });

/** A registered S3-compatible bucket; its credentials are write-only and never answered. */
export interface Destination {
  name: string;
  endpoint: string;
  bucket: string;
  region: string;
  pathStyle: boolean;
  keyTemplate: string;
  hasCredentials: true;
  /** The Kubernetes Site whose spec.storage this destination is (change it there: the API answers 409), or null. */
  managedBy: ManagedBy | null;
  createdAt: string;
  updatedAt: string;
}
export const DESTINATION_FIELDS = fields<Destination>({ name: true, endpoint: true, bucket: true, region: true, pathStyle: true, keyTemplate: true, hasCredentials: true, managedBy: true, createdAt: true, updatedAt: true });

export interface DestinationCreateParams {
  name: string;
  endpoint: string;
  bucket: string;
  region?: string;
  pathStyle?: boolean;
  keyTemplate?: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}
export const DESTINATION_CREATE_FIELDS = fields<DestinationCreateParams>({ name: true, endpoint: true, bucket: true, region: true, pathStyle: true, keyTemplate: true, credentials: true });

export type DestinationUpdateParams = Partial<Omit<DestinationCreateParams, 'name'>>;
export const DESTINATION_UPDATE_FIELDS = fields<DestinationUpdateParams>({ endpoint: true, bucket: true, region: true, pathStyle: true, keyTemplate: true, credentials: true });

/** What the page must do to work, judged against its report (docs/capture-options.md, "Checks"). */
export interface ReportChecks {
  /** Expected final statuses of the main document. */
  status?: number[];
  /** Console errors and uncaught exceptions allowed; `ignore`: patterns of messages not counted. */
  maxConsoleErrors?: number | { max: number; ignore?: string[] };
  /** Failed requests allowed; `ignore`: URL patterns; `byType`: a bound per resource type. */
  maxFailedRequests?: number | { max?: number; ignore?: string[]; byType?: Record<string, number> };
  /** Bounds per Web Vital (LCP, CLS, FCP, TTFB, TBT). */
  webVitals?: Record<string, unknown>;
  /** axe-core violations allowed at or above each impact; `skipRules`: rule ids not counted. */
  maxViolations?: Record<string, number | string[]>;
  /** Text that must or must not appear, in the page or in a selector. */
  text?: Array<Record<string, string>>;
  /** Milliseconds from navigation start to the end of the load event. */
  maxLoadTime?: number;
}

export const REPORT_CHECKS_FIELDS = fields<ReportChecks>({
  status: true, maxConsoleErrors: true, maxFailedRequests: true, webVitals: true, maxViolations: true, text: true, maxLoadTime: true,
});

/** `report` as an object: axe's audit, and checks judged against the report. */
export interface ReportOptions {
  axe?: boolean;
  checks?: ReportChecks;
}
export const REPORT_OPTION_FIELDS = fields<ReportOptions>({ axe: true, checks: true });

/**
 * The body of a synchronous capture answered in JSON (`screenshots.create`): the options, and
 * `report`, the page report of the same visit beside the image (never on an image answer or an
 * asynchronous capture, which cannot carry it).
 */
export interface ScreenshotOptions extends CaptureOptions {
  report?: boolean | ReportOptions;
}
export const SCREENSHOT_OPTION_FIELDS = fields<ScreenshotOptions>({
  ...Object.fromEntries(CAPTURE_OPTION_FIELDS.map((name) => [name, true])) as FieldSet<CaptureOptions>,
  report: true,
});

/**
 * The page report (docs/capture-options.md, "The report"): the document's status and redirects, the
 * console, failed requests, Web Vitals, weight and a request timeline; `checks` holds the verdict
 * when checks were asked.
 */
export interface PageReport {
  document: { url: string; status: number | null; redirects: Array<{ url: string; status: number }> };
  console: Record<'errors' | 'warnings' | 'cspReportOnly' | 'browser', { total: number; items: Array<Record<string, unknown>> }>;
  failedRequests: { total: number; items: Array<Record<string, unknown>> };
  vitals: Record<string, Record<string, unknown>>;
  loadTimeMs: number | null;
  weight: { requests: number; bytes: number; byType: Record<string, { requests: number; bytes: number }> };
  timeline: { total: number; items: Array<Record<string, unknown>> };
  accessibility?: Record<string, unknown>;
  text?: Record<string, unknown>;
  /** Only when checks were asked: the verdict, and each failure with the check, the value and the bound. */
  checks?: { failing: boolean; failures: Array<Record<string, unknown>> };
}

/** An asynchronous capture: the options, plus where to send the webhook and an idempotency key. */
export interface AsyncCaptureOptions extends CaptureOptions {
  /** Told the outcome with a signed POST (see `verifyWebhook`). */
  webhookUrl?: string;
  /** The same key within 24 h answers the same capture instead of making a second one. */
  idempotencyKey?: string;
}
export const ASYNC_CAPTURE_OPTION_FIELDS = fields<AsyncCaptureOptions>({
  ...Object.fromEntries(CAPTURE_OPTION_FIELDS.map((name) => [name, true])) as FieldSet<CaptureOptions>,
  webhookUrl: true,
  idempotencyKey: true,
});

/**
 * The JSON answer of a synchronous capture: `image`, a data URI, or with the `storage` option
 * `storage`, where the capture was written instead; exactly one of the two is there.
 */
export interface ScreenshotResult {
  success: true;
  /** `data:image/png;base64,...` (or image/jpeg, image/webp, application/pdf); absent when the capture asked for `storage`. */
  image?: string;
  /** Only with `storage`: where the capture was written, instead of `image`. */
  storage?: StoredObject;
  url: string;
  quality: Quality;
  width: number;
  height: number;
  fileSize: number;
  processingTimeMs: number;
  waitMs?: number;
  /** Only with fullPage or a selector: the page was taller than the cap and the image was cut. */
  truncated?: boolean;
  /** Only with a cacheTtl above 0: whether the result came from the result cache. */
  cached?: boolean;
  /** Hosted mode: the site the capture was counted against. */
  site_id?: string;
  /** Only when the request asked for `report`. */
  report?: PageReport;
  /** Only when the request had `steps`: each step's outcome and time, and the capture steps' pictures (data URIs). */
  journey?: {
    steps: Array<{ action: string; status: 'ok' | 'failed' | 'skipped'; durationMs?: number; reason?: string; [field: string]: unknown }>;
    captures?: Array<{ name: string; image: string }>;
  };
}
export const SCREENSHOT_RESULT_FIELDS = fields<ScreenshotResult>({
  success: true, image: true, url: true, quality: true, width: true, height: true, fileSize: true, processingTimeMs: true,
  waitMs: true, truncated: true, cached: true, site_id: true, report: true, journey: true, storage: true,
});

/** A capture answered as bytes (Accept: image/...), with the other fields read from its Viewfinder-* headers. */
export interface ScreenshotImage {
  bytes: Uint8Array;
  /** image/png, image/jpeg, image/webp or application/pdf. */
  contentType: string;
  width: number | undefined;
  height: number | undefined;
  fileSize: number | undefined;
  processingTimeMs: number | undefined;
  waitMs: number | undefined;
  truncated: boolean | undefined;
  /** hit or miss, only with a cacheTtl above 0. */
  cache: 'hit' | 'miss' | undefined;
  siteId: string | undefined;
}

/** The answer to a submit: the capture's id and where its status is. */
export interface AcceptedCapture {
  id: string;
  status: CaptureState;
  statusUrl: string;
}
export const ACCEPTED_CAPTURE_FIELDS = fields<AcceptedCapture>({ id: true, status: true, statusUrl: true });

export interface WebhookDelivery {
  url: string;
  status: (typeof WEBHOOK_STATES)[number];
  attempts: number;
  lastError: string | null;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
}
export const WEBHOOK_DELIVERY_FIELDS = fields<WebhookDelivery>({ url: true, status: true, attempts: true, lastError: true, deliveredAt: true, nextAttemptAt: true });

/** `GET /api/captures/{id}`: the status of an asynchronous capture, with its result once succeeded. */
export interface CaptureStatus {
  id: string;
  status: CaptureState;
  url: string;
  createdAt: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  expiresAt?: string | null;
  attempts: number;
  maxAttempts: number;
  lastError?: string | null;
  statusUrl: string;
  /** Only with a webhookUrl. */
  webhook?: WebhookDelivery;
  /** Once succeeded: the synchronous answer. */
  result?: ScreenshotResult;
}
export const CAPTURE_STATUS_FIELDS = fields<CaptureStatus>({
  id: true, status: true, url: true, createdAt: true, startedAt: true, finishedAt: true, expiresAt: true, attempts: true,
  maxAttempts: true, lastError: true, statusUrl: true, webhook: true, result: true,
});

/** The metadata of a succeeded capture in a webhook: the result without its image. */
export type WebhookMetadata = Omit<ScreenshotResult, 'success' | 'image'> & { format: Format };

/** The body of a webhook (docs/async.md, "Webhooks"). */
export interface WebhookEvent {
  id: string;
  event: 'capture.succeeded' | 'capture.failed';
  status: 'succeeded' | 'failed';
  createdAt: string;
  finishedAt: string;
  attempts: number;
  metadata: WebhookMetadata | null;
  error: string | null;
  /** GET it with your key (`captures.image(id)` does) for the image; null for a failed capture, or one written to storage. */
  imageUrl: string | null;
  /** With `storage`: where the image was written; null otherwise. */
  storage: StoredObject | null;
  statusUrl: string;
}
export const WEBHOOK_EVENT_FIELDS = fields<WebhookEvent>({
  id: true, event: true, status: true, createdAt: true, finishedAt: true, attempts: true, metadata: true, error: true, imageUrl: true, storage: true, statusUrl: true,
});

/** The Kubernetes resource that owns an object; the API answers 409 to changes made elsewhere. */
export interface ManagedBy {
  kind: (typeof MANAGED_KINDS)[number];
  namespace: string;
  name: string;
  uid: string;
}
export const MANAGED_BY_FIELDS = fields<ManagedBy>({ kind: true, namespace: true, name: true, uid: true });

export interface Site {
  id: string;
  name: string;
  /** Normalized host names; subdomains are included. */
  allowedDomains: string[];
  managedBy: ManagedBy | null;
  createdAt: string;
  updatedAt: string;
}
export const SITE_FIELDS = fields<Site>({ id: true, name: true, allowedDomains: true, managedBy: true, createdAt: true, updatedAt: true });

export interface SiteCreateParams {
  allowedDomains: string[];
  /** Defaults to the first allowed domain. */
  name?: string;
}
export const SITE_CREATE_FIELDS = fields<SiteCreateParams>({ allowedDomains: true, name: true });

export interface SiteUpdateParams {
  /** Replaces the whole list. */
  allowedDomains?: string[];
  name?: string;
}
export const SITE_UPDATE_FIELDS = fields<SiteUpdateParams>({ allowedDomains: true, name: true });

/** An API key as lists show it: never its secret. */
export interface ApiKey {
  id: string;
  name: string;
  kind: (typeof KEY_KINDS)[number];
  siteId: string | null;
  restrictDomains: boolean;
  unsignedLinks: boolean;
  /** The first characters of the key, to tell keys apart. */
  prefix: string;
  managedBy: ManagedBy | null;
  createdAt: string;
  lastUsedAt: string | null;
}
export const API_KEY_FIELDS = fields<ApiKey>({
  id: true, name: true, kind: true, siteId: true, restrictDomains: true, unsignedLinks: true, prefix: true, managedBy: true, createdAt: true, lastUsedAt: true,
});

/** A key as create and regenerate answer it, once: with the key itself and its signing secret. */
export interface IssuedApiKey extends ApiKey {
  key: string;
  /** Signs render links and webhooks (HMAC-SHA256). */
  signingSecret: string;
}
export const ISSUED_API_KEY_FIELDS = fields<IssuedApiKey>({
  ...Object.fromEntries(API_KEY_FIELDS.map((name) => [name, true])) as FieldSet<ApiKey>,
  key: true,
  signingSecret: true,
});

export interface KeyCreateParams {
  name: string;
  /** Makes a site key; without it the key has full access. */
  siteId?: string;
  /** Site keys only: capture only the site's allowed domains. */
  restrictDomains?: boolean;
  /** Site keys only: let render links carry this key itself, unsigned. */
  unsignedLinks?: boolean;
}
export const KEY_CREATE_FIELDS = fields<KeyCreateParams>({ name: true, siteId: true, restrictDomains: true, unsignedLinks: true });

export interface Deleted {
  /** The id of the deleted object. */
  deleted: string;
}
export const DELETED_FIELDS = fields<Deleted>({ deleted: true });

export interface UsageCounts {
  captures: number;
  failures: number;
  /** Bytes of images returned. */
  bytes: number;
}
export const USAGE_COUNTS_FIELDS = fields<UsageCounts>({ captures: true, failures: true, bytes: true });

export interface Usage {
  /** By site id. */
  sites: Record<string, UsageCounts>;
  /** By key id. */
  keys: Record<string, UsageCounts>;
  /** By monitor id. */
  monitors: Record<string, UsageCounts>;
}
export const USAGE_FIELDS = fields<Usage>({ sites: true, keys: true, monitors: true });

/** A rectangle in CSS pixels of the picture. */
export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}
export const REGION_FIELDS = fields<Region>({ left: true, top: true, width: true, height: true });

/** A page of a monitor: its name, URL and the capture options that make sense there. */
export interface MonitorPage extends VisitOptions {
  /** A DNS label, unique in the monitor. */
  name: string;
  url: string;
  quality?: Quality;
  fullPage?: boolean;
  removeAds?: boolean;
  wait?: number;
  waitForSelector?: string;
  selector?: string;
  hideSelectors?: string[];
  darkMode?: boolean;
  reducedMotion?: boolean;
  /** Left out of the comparison. */
  ignoreRegions?: Region[];
  /** Write-only: answers say `hasCredentials`. */
  credentials?: MonitorPageCredentials;
  /** A journey done before each run's picture (docs/monitors.md, "Journeys"): a fill takes a secret with `valueFrom`, a name in `credentials.values`. */
  steps?: JourneyStep[];
  /** What the page must do to work, judged in every run; axe runs only with `maxViolations` (docs/monitors.md, "Checks"). */
  checks?: ReportChecks;
}
const MONITOR_PAGE_SET: FieldSet<MonitorPage> = {
  checks: true, steps: true, name: true, url: true, quality: true, fullPage: true, removeAds: true, wait: true, waitForSelector: true, selector: true,
  hideSelectors: true, darkMode: true, reducedMotion: true, ignoreRegions: true, credentials: true, userAgent: true, injectCss: true,
  injectJs: true, click: true, blockResources: true, blockUrls: true, timezone: true, locale: true, geolocation: true,
};
export const MONITOR_PAGE_FIELDS = fields<MonitorPage>(MONITOR_PAGE_SET);

/** A page as answers show it. */
export interface MonitorPageView extends MonitorPage {
  hasCredentials: boolean;
}
export const MONITOR_PAGE_VIEW_FIELDS = fields<MonitorPageView>({ ...MONITOR_PAGE_SET, hasCredentials: true });

export interface MonitorCompare {
  /** The share of pixels (0 to 1) that may differ before a page counts as changed. */
  threshold?: number;
  baseline?: (typeof BASELINE_MODES)[number];
  /** How different two pixels must be to count (0 to 1). */
  pixelTolerance?: number;
}
export const MONITOR_COMPARE_FIELDS = fields<MonitorCompare>({ threshold: true, baseline: true, pixelTolerance: true });

export interface MonitorCreateParams {
  /** A DNS label, unique in the account. */
  name: string;
  siteId?: string;
  /** Five-field cron or @hourly, @daily, @weekly, @monthly, @yearly. */
  schedule: string;
  timeZone?: string;
  suspend?: boolean;
  historyLimit?: number;
  compare?: MonitorCompare;
  pages: MonitorPage[];
}
const MONITOR_SPEC_SET: FieldSet<MonitorCreateParams> = {
  name: true, siteId: true, schedule: true, timeZone: true, suspend: true, historyLimit: true, compare: true, pages: true,
};
export const MONITOR_CREATE_FIELDS = fields<MonitorCreateParams>(MONITOR_SPEC_SET);

/** Fields given replace the current ones; `pages` replaces the list, `compare` merges; `siteId: null` removes the site. */
export type MonitorUpdateParams = Partial<Omit<MonitorCreateParams, 'siteId'>> & { siteId?: string | null };
export const MONITOR_UPDATE_FIELDS = fields<MonitorUpdateParams>(MONITOR_SPEC_SET);

export interface Monitor {
  id: string;
  name: string;
  siteId: string | null;
  schedule: string;
  timeZone: string;
  suspend: boolean;
  historyLimit: number;
  compare: MonitorCompare;
  pages: MonitorPageView[];
  /** Page name → the id of its baseline picture. */
  baselines: Record<string, string>;
  managedBy: ManagedBy | null;
  /** Null while suspended. */
  nextRunAt: string | null;
  createdAt: string;
  updatedAt: string;
}
export const MONITOR_FIELDS = fields<Monitor>({
  ...MONITOR_SPEC_SET, id: true, baselines: true, managedBy: true, nextRunAt: true, createdAt: true, updatedAt: true,
});

export interface MonitorRunPage {
  page: string;
  outcome: (typeof PAGE_OUTCOMES)[number];
  diffRatio: number | null;
  regions: Region[];
  captureImageId: string | null;
  diffImageId: string | null;
  baselineImageId: string | null;
  error: string | null;
  /** The page's checks judged in this run; null without checks or when the capture failed. A journey that stopped fails it, naming the step (`steps[i]`). */
  verdict: CheckVerdict | null;
  /** The page's journey in this run; null for a page without steps. */
  journey: MonitorJourney | null;
}
export const MONITOR_RUN_PAGE_FIELDS = fields<MonitorRunPage>({
  page: true, outcome: true, diffRatio: true, regions: true, captureImageId: true, diffImageId: true, baselineImageId: true, error: true, verdict: true, journey: true,
});

/** What a run keeps of a page's journey: each step's report (never a value typed), the step that failed, and the picture of that moment. */
export interface MonitorJourney {
  steps: Array<{ action: string; status: 'ok' | 'failed' | 'skipped'; durationMs?: number; reason?: string; [field: string]: unknown }>;
  /** The index (from 0) of the step that failed; absent when every step ran. */
  failedStep?: number;
  /** The page when that step failed (`monitors.image`). */
  failureImageId?: string;
}
export const MONITOR_JOURNEY_FIELDS = fields<MonitorJourney>({ steps: true, failedStep: true, failureImageId: true });

/** A verdict of checks: failing when any failed; each failure names the check, the value measured and the bound. */
export interface CheckVerdict {
  failing: boolean;
  failures: Array<{ check: string; measured: number | string | null; bound: number | string | number[]; message: string }>;
  passed: string[];
}

/** A page of one run as `monitors.getRun` answers it: with the report of its visit (null when the capture failed). */
export interface MonitorRunPageReport extends MonitorRunPage {
  report: PageReport | null;
}
export const MONITOR_RUN_PAGE_REPORT_FIELDS = fields<MonitorRunPageReport>({
  ...(Object.fromEntries(MONITOR_RUN_PAGE_FIELDS.map((name) => [name, true])) as FieldSet<MonitorRunPage>),
  report: true,
});

/** One run, each page with its report (`monitors.getRun`). */
export interface MonitorRunWithReports extends Omit<MonitorRun, 'pages'> {
  pages: MonitorRunPageReport[];
}

export interface MonitorRun {
  id: string;
  trigger: (typeof RUN_TRIGGERS)[number];
  scheduledAt: string;
  startedAt: string;
  finishedAt: string;
  pages: MonitorRunPage[];
}
export const MONITOR_RUN_FIELDS = fields<MonitorRun>({ id: true, trigger: true, scheduledAt: true, startedAt: true, finishedAt: true, pages: true });

export interface RunNowResult {
  /** The run's job; its run appears in `monitors.runs()` once finished. */
  jobId: string;
}
export const RUN_NOW_FIELDS = fields<RunNowResult>({ jobId: true });

export interface AcceptBaselineParams {
  runId: string;
  page: string;
}
export const ACCEPT_BASELINE_FIELDS = fields<AcceptBaselineParams>({ runId: true, page: true });
