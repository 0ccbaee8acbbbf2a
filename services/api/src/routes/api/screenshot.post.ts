import type { ErrorObject } from 'ajv';
import { principalOf } from '../../auth/hosted-key.ts';
import { compileValidator } from '../../validation.ts';
import { CAPTURE_FORMATS, MIME_TYPES } from '../../../../renderer/src/capture/image-formats.ts';
import { rawImageFormat, sendScreenshot, sendStoredScreenshot } from '../screenshot-answer.ts';
import { captureOptionsProblems } from '../capture-options.ts';
import { screenshotBodySchema, screenshotMessages, withAcceptedFormat, type ScreenshotBody } from '../screenshot.ts';
import { captureForKey } from './hosted-capture.ts';
import { pageReportSchema } from '../../../../renderer/src/report/page-report.ts';
import { verdictSchema } from '../../monitors/checks.ts';
import type { ApiRoute } from './route.ts';
import { NotAcceptable } from '../../../../../lib/errors.ts';
import { newCaptureId, rethrowStorage, type StorageOption } from '../../storage/delivery.ts';
import { storageOptionMessages, storageOptionProblems, storageOptionSchema, storedObjectSchema } from '../../storage/schemas.ts';

/** SPEC 2.1 plus `site_id`: the self-hosted body, extended, so both variants validate the same fields the same way. */
export interface HostedScreenshotBody extends ScreenshotBody {
  site_id?: string;
  storage?: StorageOption;
}

export const hostedScreenshotBodySchema = {
  ...screenshotBodySchema,
  properties: {
    ...screenshotBodySchema.properties,
    site_id: { type: 'string', minLength: 1, maxLength: 64, description: 'Required with a full-access key; a site key uses its own site.' },
    storage: storageOptionSchema,
  },
} as const;

export const validateBody = compileValidator<HostedScreenshotBody>(
  hostedScreenshotBodySchema,
  [...storageOptionMessages, ...screenshotMessages, (e: ErrorObject) => (e.instancePath === '/site_id' ? 'site_id must be a non-empty string of at most 64 characters' : undefined)],
  (body) => [...captureOptionsProblems(body), ...storageOptionProblems(body)],
);

const screenshotResultSchema = {
  type: 'object',
  required: ['success', 'url', 'quality', 'width', 'height', 'fileSize', 'processingTimeMs', 'site_id'],
  properties: {
    success: { const: true },
    image: { type: 'string', description: 'data:image/png;base64,... (image/jpeg, image/webp or application/pdf with that format); absent with the storage option, whose answer says where the image went' },
    storage: storedObjectSchema,
    url: { type: 'string' },
    quality: screenshotBodySchema.properties.quality,
    width: { type: 'integer', description: 'Image width in pixels; with format pdf, the first page\'s width in CSS pixels (1 in = 96 px)' },
    height: { type: 'integer', description: 'Image height in pixels; with format pdf, the first page\'s height in CSS pixels' },
    fileSize: { type: 'integer', description: 'Bytes of the encoded image or PDF' },
    processingTimeMs: { type: 'integer' },
    waitMs: { type: 'integer' },
    truncated: { type: 'boolean', description: 'Only with fullPage: true or a selector; the page or element was taller than the cap.' },
    cached: { type: 'boolean', description: 'Only with cacheTtl above 0: true when the answer came from the result cache (also the Viewfinder-Cache header).' },
    site_id: { type: 'string', description: 'The site the capture was counted against.' },
    journey: {
      type: 'object',
      description: 'Only when the request had steps: steps (each with action, selector/url/key/name, status ok, durationMs) and captures (name, image as a data URI).',
    },
    report: {
      ...pageReportSchema,
      description: `Only when the request asked for a report. ${pageReportSchema.description}`,
      properties: { ...pageReportSchema.properties, checks: verdictSchema },
    },
  },
};

export const hostedScreenshotRoute: ApiRoute = {
  method: 'POST',
  path: '/api/screenshot',
  operationId: 'captureScreenshot',
  summary: 'Capture a screenshot',
  description:
    'Renders the URL (or an html document) in Chromium and returns the PNG (or the format asked for: JPEG, WebP, or a PDF printed from the page) as a data URI. Checks, in order: the key (401), the site (400 without site_id on a full-access key, ' +
    '404 for a site that is not the account\'s, 403 for a site key given another site), the domain (403), the rate limit (429), then captures.',
  tag: 'Screenshots',
  access: 'any-key',
  body: hostedScreenshotBodySchema,
  responses: {
    200: {
      description:
        'The screenshot: JSON by default; the image or PDF bytes themselves when Accept asks for image/png, image/jpeg, image/webp, image/* or application/pdf, ' +
        'with the other fields as Viewfinder-* headers (Viewfinder-Width, Viewfinder-Height, Viewfinder-File-Size, Viewfinder-Processing-Time-Ms, ...).',
      schema: screenshotResultSchema,
      alternatives: Object.fromEntries(CAPTURE_FORMATS.map((format) => [MIME_TYPES[format], { type: 'string', contentMediaType: MIME_TYPES[format] }])),
      headers: {
        'Viewfinder-Cache': { description: 'hit or miss; only when the request gave a cacheTtl above 0', schema: { type: 'string', enum: ['hit', 'miss'] } },
        'Viewfinder-Width': { description: 'Raw answers only: the image width in pixels (a PDF: its first page, in CSS pixels)', schema: { type: 'integer' } },
        'Viewfinder-Height': { description: 'Raw answers only: the image height in pixels (a PDF: its first page, in CSS pixels)', schema: { type: 'integer' } },
        'Viewfinder-Processing-Time-Ms': { description: 'Raw answers only: processing time in milliseconds', schema: { type: 'integer' } },
      },
    },
  },
  errors: {
    403: 'The URL\'s host, or that of a page it redirects or navigates to, is not among the site\'s allowed domains; or html with a domain-restricted key; or the site key belongs to another site; or the storage destination\'s endpoint is refused by the network guard',
    404: 'The site does not exist or belongs to another account',
    406: 'Accept allows neither JSON nor the media type of the requested format; or a report or storage was asked with an Accept that allows only the image',
    408: 'The page took too long to load, or no element matching waitForSelector became visible in time',
    422: 'A step of the journey (steps) failed: the error names it and why; `journey` holds the step report (failedStep, each step\'s status, durationMs and reason) and `image` the page when it failed (a data URI)',
    429: 'Rate limit exceeded; see Retry-After',
    500: 'Screenshot generation failed',
    502: 'With storage: the destination refused or failed the upload (wrong keys, no such bucket, no DNS answer, no connection, timeout); the error says which, never the credentials',
  },
  handler: (deps) =>
    async (ctx) => {
      const started = performance.now();
      const { site_id: siteId, storage, ...given } = validateBody(ctx.request.body);
      const principal = principalOf(ctx);
      // After the site, domain and rate-limit checks, as before: the Accept header's format.
      const chooseFormat = () => {
        const raw = rawImageFormat(ctx, given.format);
        if (storage && raw !== undefined) throw new NotAcceptable('Not acceptable: with storage the answer is JSON saying where the image went; accept application/json');
        return { raw, body: withAcceptedFormat(given, raw, validateBody) };
      };
      // The destination exists and its endpoint passes the guard before anything renders.
      const beforeCapture = storage ? () => deps.storage.prepareNow(principal.account.id, storage).then(() => undefined, rethrowStorage) : undefined;
      const { answer, raw, recordCapture, recordFailure } = await captureForKey(deps, ctx, principal, { given, siteId, chooseFormat, started, ...(beforeCapture ? { beforeCapture } : {}) });
      if (!storage) {
        await recordCapture(answer.body.fileSize);
        sendScreenshot(ctx, answer, raw);
        return;
      }
      let stored;
      try {
        stored = await deps.storage.deliver(principal.account.id, storage, { id: newCaptureId(), createdAt: new Date(), format: answer.format, image: answer.image });
      } catch (err) {
        await recordFailure();
        rethrowStorage(err);
      }
      await recordCapture(answer.body.fileSize);
      sendStoredScreenshot(ctx, answer, stored);
    },
};
