/**
 * How a screenshot is answered: SPEC 2.2's JSON by default, or, when the Accept header asks for an
 * image or a PDF, its bytes themselves with the result's other fields in Viewfinder-* headers. Errors
 * are JSON either way (the error translator writes them).
 */
import type { Context } from 'koa';
import { NotAcceptable } from '../../../../lib/errors.ts';
import { CAPTURE_FORMATS, formatOfMimeType, MIME_TYPES, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';

const JSON_TYPE = 'application/json';

/**
 * The format to answer as raw bytes, or undefined for JSON. JSON wins whenever the client accepts it
 * as much as an image (no Accept, `*\/*`). Without a `format` field an image type in Accept chooses
 * the encoding (`image/*` means png), and application/pdf chooses pdf; with one, Accept must allow
 * that format or the answer is 406. An Accept that names no image nor PDF at all keeps today's JSON answer.
 */
export function rawImageFormat(ctx: Context, format: CaptureFormat | undefined): CaptureFormat | undefined {
  const offered = (format ? [format] : CAPTURE_FORMATS).map((f) => MIME_TYPES[f]);
  const choice = ctx.accepts(JSON_TYPE, ...offered);
  if (choice === JSON_TYPE) return undefined;
  if (typeof choice === 'string') return formatOfMimeType(choice);
  if (!/\bimage\/|\bapplication\/pdf\b/i.test(ctx.get('Accept'))) return undefined;
  throw new NotAcceptable(`Not acceptable: this request can answer ${[JSON_TYPE, ...offered].join(' or ')}; the Accept header allows neither`);
}

/** Response fields that are not headers of a raw answer: the image is the body itself. */
const NOT_HEADERS = new Set(['success', 'image']);

/** `processingTimeMs` → `Viewfinder-Processing-Time-Ms`, `site_id` → `Viewfinder-Site-Id`. */
export function headerName(field: string): string {
  const words = field.replace(/([a-z0-9])([A-Z])/g, '$1_$2').split('_');
  return ['Viewfinder', ...words.map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())].join('-');
}

export interface ScreenshotAnswer {
  /** The JSON body, SPEC 2.2's fields and any extras (site_id, cached, truncated). */
  body: Record<string, unknown> & { cached?: boolean };
  image: Buffer;
  format: CaptureFormat;
}

/** Writes the answer: JSON, or the raw image when `raw` is set. Cached answers say so in a header too. */
export function sendScreenshot(ctx: Context, answer: ScreenshotAnswer, raw: CaptureFormat | undefined): void {
  if (answer.body.cached !== undefined) ctx.set('Viewfinder-Cache', answer.body.cached ? 'hit' : 'miss');
  if (raw === undefined) {
    ctx.body = answer.body;
    return;
  }
  for (const [field, value] of Object.entries(answer.body)) {
    if (field === 'journey') ctx.set(JOURNEY_HEADER, journeyHeader(value as { steps: unknown }));
    // The URL goes as its ASCII form: a header cannot carry what the client may have typed.
    else if (!NOT_HEADERS.has(field) && value !== undefined) ctx.set(headerName(field), field === 'url' ? asciiUrl(String(value)) : String(value));
  }
  ctx.type = MIME_TYPES[answer.format];
  ctx.body = answer.image;
}

/** A raw answer's step report: the JSON answer's journey.steps, without the capture steps' pictures, which only JSON carries. */
export const JOURNEY_HEADER = 'Viewfinder-Journey-Steps';

/** The steps as JSON in a header: every character beyond ASCII escaped, as a header can carry only that. */
function journeyHeader(journey: { steps: unknown }): string {
  return JSON.stringify(journey.steps).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function asciiUrl(url: string): string {
  return URL.parse(url)?.href ?? encodeURI(url);
}

/**
 * The answer of a capture written to a storage destination, in either mode: the JSON fields without
 * the image, and `storage` saying where it went (docs/storage.md).
 */
export function sendStoredScreenshot(ctx: Context, answer: ScreenshotAnswer, stored: object): void {
  if (answer.body.cached !== undefined) ctx.set('Viewfinder-Cache', answer.body.cached ? 'hit' : 'miss');
  const { image: _image, ...fields } = answer.body;
  ctx.body = { ...fields, storage: stored };
}
