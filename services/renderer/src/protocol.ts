/**
 * The renderer service's internal HTTP API, shared by its server (server.ts) and its client
 * (services/api/src/remote-renderer.ts):
 *
 *   POST /v1/captures   Content-Type: application/json, body: a CaptureRequest
 *                       Authorization: Bearer <RENDERER_TOKEN> when the service has a token
 *                       X-Request-Id: the API's request id (optional)
 *   200                 Content-Type: image/png (or image/jpeg, image/webp, application/pdf: the request's
 *                       format), body: the image or PDF bytes; metadata in headers:
 *                       X-Image-Width, X-Image-Height (a PDF's first page in CSS px), X-Image-Truncated (true|false), X-Wait-Ms;
 *                       with a `report` asked: X-Report-Bytes, and the body is the image followed by that many
 *                       bytes of the page report's JSON (report/page-report.ts); with `steps`: X-Journey-Bytes, and
 *                       that many bytes of the journey's JSON last (capture/journey.ts journeyJson: pictures as data URIs)
 *   422                 a journey stopped at a step: {success:false, error, journey, image?} (JourneyFailed)
 *   4xx/5xx             the typed error of lib/errors.ts as JSON: {success:false,error} (401: {error})
 *   every answer        the renderer's load after this capture: X-Renderer-Capacity, X-Renderer-Free-Slots,
 *                       X-Renderer-Queued (what the API balances on, see RendererLoad)
 *   503                 with X-Renderer-Draining: true when it is shutting down: it did no work, retry elsewhere
 *
 *   GET /v1/status      200 {ready, draining, capacity, freeSlots, inFlight, queued}: cheap, no token, for the
 *                       API's balancer between captures
 *
 * Image bytes travel raw rather than base64 in JSON: a third smaller, and nothing to decode.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { IncomingHttpHeaders } from 'node:http';
import {
  BadRequest,
  CaptureFailed,
  Forbidden,
  HttpError,
  JourneyFailed,
  NavigationTimeout,
  ServiceUnavailable,
  TooManyRequests,
} from '../../../lib/errors.ts';
import { CAPTURE_FORMATS, formatOfMimeType } from './capture/image-formats.ts';
import { pdfOptionsProblems, pdfOptionsSchema } from './capture/pdf.ts';
import { PROFILE_NAMES } from './capture/profiles.ts';
import { HTML_DOCUMENT_URL, type CaptureRequest, type CaptureResult, type RendererStats } from './renderer.ts';
import { hasCredentials, visitOptionsProblems, visitOptionsProperties } from './capture/visit-options.ts';
import { reportRequestSchema, type PageReport } from './report/page-report.ts';
import { wireStepsSchema } from './capture/journey-steps.ts';
import { journeyJson, type JourneyOutcome } from './capture/journey.ts';

export const CAPTURE_PATH = '/v1/captures';
export const STATUS_PATH = '/v1/status';

/** How busy a renderer is: what it reports on every capture answer and at STATUS_PATH. */
export interface RendererLoad {
  /** Captures it runs at once (RENDER_CONCURRENCY). */
  capacity: number;
  /** Captures running now. */
  inFlight: number;
  /** Captures admitted and waiting for a slot. */
  queued: number;
}

export interface RendererStatus extends RendererLoad {
  ready: boolean;
  draining: boolean;
  freeSlots: number;
}

const LOAD_HEADER = { capacity: 'x-renderer-capacity', freeSlots: 'x-renderer-free-slots', queued: 'x-renderer-queued' } as const;
export const DRAINING_HEADER = 'x-renderer-draining';

export function loadOf(stats: RendererStats): RendererLoad {
  return { capacity: stats.capacity, inFlight: stats.inFlight, queued: stats.queued };
}

export function loadHeaders(load: RendererLoad): Record<string, string> {
  return {
    [LOAD_HEADER.capacity]: String(load.capacity),
    [LOAD_HEADER.freeSlots]: String(Math.max(0, load.capacity - load.inFlight)),
    [LOAD_HEADER.queued]: String(load.queued),
  };
}

/** The load an answer reports; undefined when it carries none (an older renderer, a proxy's error). */
export function loadFromHeaders(headers: IncomingHttpHeaders): RendererLoad | undefined {
  const capacity = Number(headers[LOAD_HEADER.capacity]);
  const freeSlots = Number(headers[LOAD_HEADER.freeSlots]);
  const queued = Number(headers[LOAD_HEADER.queued]);
  if (![capacity, freeSlots, queued].every((n) => Number.isSafeInteger(n) && n >= 0) || capacity < 1) return undefined;
  return { capacity, inFlight: Math.max(0, capacity - freeSlots), queued };
}

/** Bounds on the selector options, shared with the API's schema. */
export const MAX_SELECTOR_LENGTH = 1024;
export const MAX_HIDE_SELECTORS = 50;

const HEADER = {
  width: 'x-image-width',
  height: 'x-image-height',
  truncated: 'x-image-truncated',
  waitMs: 'x-wait-ms',
  reportBytes: 'x-report-bytes',
  journeyBytes: 'x-journey-bytes',
} as const;

/** A 200's headers and body: the image, then the report's JSON when there is one (its length in X-Report-Bytes), then the journey's (X-Journey-Bytes). */
export function resultAnswer(result: CaptureResult): { headers: Record<string, string>; body: Buffer } {
  const headers: Record<string, string> = {
    [HEADER.width]: String(result.width),
    [HEADER.height]: String(result.height),
    [HEADER.truncated]: String(result.truncated),
    [HEADER.waitMs]: String(result.waitMs),
  };
  if (!result.report && !result.journey) return { headers, body: result.image };
  const parts = [result.image];
  if (result.report) {
    const report = Buffer.from(JSON.stringify(result.report), 'utf8');
    headers[HEADER.reportBytes] = String(report.byteLength);
    parts.push(report);
  }
  if (result.journey) {
    const journey = Buffer.from(JSON.stringify(journeyJson(result.journey)), 'utf8');
    headers[HEADER.journeyBytes] = String(journey.byteLength);
    parts.push(journey);
  }
  return { headers, body: Buffer.concat(parts) };
}

/** The journey of a wire answer: its pictures back from data URIs to bytes. */
function journeyFromJson(json: { steps: JourneyOutcome['steps']; captures: { name: string; image: string }[] }): JourneyOutcome {
  return { steps: json.steps, captures: json.captures.map(({ name, image }) => ({ name, image: Buffer.from(image.slice(image.indexOf(',') + 1), 'base64') })) };
}

/** Rebuilds the CaptureResult from a 200's body and headers; a malformed answer is a failed capture. */
export function resultFromResponse(body: Buffer, headers: IncomingHttpHeaders): CaptureResult {
  const malformed = () => new CaptureFailed('Screenshot generation failed: the renderer sent a malformed answer');
  const format = formatOfMimeType(headers['content-type']);
  if (format === undefined) throw malformed();
  const integer = (name: string) => {
    const value = Number(headers[name]);
    if (!Number.isSafeInteger(value) || value < 0) throw malformed();
    return value;
  };
  const reportBytes = headers[HEADER.reportBytes] === undefined ? 0 : integer(HEADER.reportBytes);
  const journeyBytes = headers[HEADER.journeyBytes] === undefined ? 0 : integer(HEADER.journeyBytes);
  if (reportBytes + journeyBytes > body.byteLength) throw malformed();
  const image = reportBytes + journeyBytes === 0 ? body : body.subarray(0, body.byteLength - reportBytes - journeyBytes);
  const result: CaptureResult = {
    image,
    format,
    width: integer(HEADER.width),
    height: integer(HEADER.height),
    fileSize: image.byteLength,
    truncated: headers[HEADER.truncated] === 'true',
    waitMs: integer(HEADER.waitMs),
  };
  if (reportBytes + journeyBytes === 0) return result;
  try {
    const reportEnd = image.byteLength + reportBytes;
    return {
      ...result,
      ...(reportBytes > 0 ? { report: JSON.parse(body.subarray(image.byteLength, reportEnd).toString('utf8')) as PageReport } : {}),
      ...(journeyBytes > 0 ? { journey: journeyFromJson(JSON.parse(body.subarray(reportEnd).toString('utf8'))) } : {}),
    };
  } catch {
    throw malformed();
  }
}

/**
 * The typed error the renderer answered with, so that the API rethrows exactly what an in-process
 * renderer would have thrown. Undefined for statuses a capture never legitimately answers.
 */
export function errorFromResponse(status: number, body: Buffer, headers: IncomingHttpHeaders): HttpError | undefined {
  const message = errorMessage(body) ?? `Renderer answered ${status}`;
  const retryAfter = Number(headers['retry-after']);
  switch (status) {
    case 400:
      return new BadRequest(message);
    case 403:
      return new Forbidden(message);
    case 408:
      return new NavigationTimeout(message);
    case 422:
      return journeyFailedFrom(body, message);
    case 429:
      return new TooManyRequests(message, Number.isFinite(retryAfter) ? retryAfter : 1);
    case 500:
      return new CaptureFailed(message);
    case 503:
      return new ServiceUnavailable(message, Number.isFinite(retryAfter) ? retryAfter : undefined);
    default:
      return undefined;
  }
}

/** A 422's journey report and picture, as the renderer's JourneyFailed carried them. */
function journeyFailedFrom(body: Buffer, message: string): JourneyFailed | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { journey?: unknown; image?: unknown };
    if (typeof parsed.journey !== 'object' || parsed.journey === null) return undefined;
    return new JourneyFailed(message, parsed.journey as Record<string, unknown>, typeof parsed.image === 'string' ? parsed.image : undefined);
  } catch {
    return undefined;
  }
}

function errorMessage(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const error = (parsed as { error?: unknown })?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The wire form of a CaptureRequest: the API has applied defaults already, so every field but
 * `wait` and `allowedDomains` is required. The API validated the client's request; this guards the renderer on its own.
 */
const captureRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'quality', 'fullPage', 'removeAds'],
  properties: {
    // about:blank (HTML_DOCUMENT_URL) with html, and only then (htmlProblems).
    url: { type: 'string', pattern: '^(https?://|about:blank$)', maxLength: 8192 },
    quality: { type: 'string', enum: [...PROFILE_NAMES] },
    wait: { type: 'number', minimum: 1000, maximum: 8000 },
    fullPage: { type: 'boolean' },
    removeAds: { type: 'boolean' },
    // As many as a site may hold (the API's allowedDomainsSchema).
    allowedDomains: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 260 } },
    format: { type: 'string', enum: [...CAPTURE_FORMATS] },
    pdf: pdfOptionsSchema,
    imageQuality: { type: 'integer', minimum: 1, maximum: 100 },
    selector: { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH },
    waitForSelector: { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH },
    hideSelectors: { type: 'array', maxItems: MAX_HIDE_SELECTORS, items: { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH } },
    darkMode: { type: 'boolean' },
    reducedMotion: { type: 'boolean' },
    freezeMotion: { type: 'boolean' },
    report: reportRequestSchema,
    ...visitOptionsProperties,
    steps: wireStepsSchema,
  },
} as const;

// 2020-12, as the API's: the schemas it shares with the API (pdf's dependentRequired) are in that dialect.
const validate = new Ajv2020({ allErrors: true, coerceTypes: false, removeAdditional: false, strict: true }).compile<CaptureRequest>(captureRequestSchema);

export function parseCaptureRequest(body: unknown): CaptureRequest {
  const problems = validate(body) ? [...pdfProblems(body), ...htmlProblems(body), ...visitOptionsProblems(body)] : (validate.errors ?? []).map((e) => `${e.instancePath.slice(1) || 'body'} ${e.message ?? 'is invalid'}`);
  if (problems.length === 0) return body as CaptureRequest;
  throw new BadRequest(`Invalid capture request: ${problems.join('; ')}`);
}

/** A capture loads its url or renders its html, never both; credentials need the url's origin. */
function htmlProblems(request: CaptureRequest): string[] {
  if ((request.html !== undefined) !== (request.url === HTML_DOCUMENT_URL)) return [`url must be ${HTML_DOCUMENT_URL} with html, and only then`];
  if (request.html === undefined) return [];
  return [...(hasCredentials(request) ? ['credentials do not apply to html'] : []), ...(request.geolocation ? ['geolocation does not apply to html'] : [])];
}

/** The API refuses these first (capture-options.ts); the renderer holds to them on its own. */
function pdfProblems(request: CaptureRequest): string[] {
  if (request.format !== 'pdf') return request.pdf ? ['pdf needs format pdf'] : [];
  return [
    ...(request.fullPage ? ['fullPage does not apply to format pdf'] : []),
    ...(request.selector !== undefined ? ['selector does not apply to format pdf'] : []),
    ...(request.imageQuality !== undefined ? ['imageQuality does not apply to format pdf'] : []),
    ...(request.pdf ? pdfOptionsProblems(request.pdf) : []),
  ];
}
