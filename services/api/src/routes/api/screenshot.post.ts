import type { ErrorObject } from 'ajv';
import { domainRefusal, hostMatches, hostOfUrl, isDomainRefusal } from '../../../../../lib/domains.ts';
import { BadRequest, Forbidden, NotFound, Unauthorized } from '../../../../../lib/errors.ts';
import type { ApiKey, Site, Store } from '../../../../../lib/store/store.ts';
import { principalOf } from '../../auth/hosted-key.ts';
import { recordAuthFailure } from '../../metrics.ts';
import { compileValidator } from '../../validation.ts';
import { CAPTURE_FORMATS, MIME_TYPES } from '../../../../renderer/src/capture/image-formats.ts';
import { rawImageFormat, sendScreenshot } from '../screenshot-answer.ts';
import { captureOptionsProblems } from '../capture-options.ts';
import { captureScreenshot, screenshotBodySchema, screenshotMessages, toCaptureRequest, withAcceptedFormat, type ScreenshotBody } from '../screenshot.ts';
import type { ApiRoute } from './route.ts';

/** SPEC 2.1 plus `site_id`: the self-hosted body, extended, so both variants validate the same fields the same way. */
export interface HostedScreenshotBody extends ScreenshotBody {
  site_id?: string;
}

export const hostedScreenshotBodySchema = {
  ...screenshotBodySchema,
  properties: {
    ...screenshotBodySchema.properties,
    site_id: { type: 'string', minLength: 1, maxLength: 64, description: 'Required with a full-access key; a site key uses its own site.' },
  },
} as const;

const validateBody = compileValidator<HostedScreenshotBody>(
  hostedScreenshotBodySchema,
  [...screenshotMessages, (e: ErrorObject) => (e.instancePath === '/site_id' ? 'site_id must be a non-empty string of at most 64 characters' : undefined)],
  captureOptionsProblems,
);

const screenshotResultSchema = {
  type: 'object',
  required: ['success', 'image', 'url', 'quality', 'width', 'height', 'fileSize', 'processingTimeMs', 'site_id'],
  properties: {
    success: { const: true },
    image: { type: 'string', description: 'data:image/png;base64,... (image/jpeg, image/webp or application/pdf with that format)' },
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
  },
};

/** The site a request captures for: named by site_id with a full-access key, implied by a site key. */
async function resolveSite(store: Store, key: ApiKey, siteId: string | undefined): Promise<Site> {
  if (key.kind === 'full') {
    if (siteId === undefined) {
      recordAuthFailure('site_required');
      throw new BadRequest('site_id is required with a full-access API key');
    }
    const site = await store.getSite(siteId);
    if (!site || site.accountId !== key.accountId) {
      recordAuthFailure('site_forbidden');
      throw new NotFound(`Site ${siteId} not found`);
    }
    return site;
  }
  if (siteId !== undefined && siteId !== key.siteId) {
    recordAuthFailure('site_forbidden');
    throw new Forbidden('This API key is scoped to another site: omit site_id or use its own');
  }
  const site = key.siteId === null ? null : await store.getSite(key.siteId);
  // A site key outlives its site only for an instant (MongoDB deletes the site, then its keys).
  if (!site) {
    recordAuthFailure('invalid_key');
    throw new Unauthorized();
  }
  return site;
}

/** SPEC 2.6: a restricted key captures only its site's allowed domains, read now, and their subdomains. */
function checkDomain(key: ApiKey, site: Site, url: string): void {
  if (!key.restrictDomains) return;
  const host = hostOfUrl(url);
  if (host === undefined || !hostMatches(host, site.allowedDomains)) {
    recordAuthFailure('domain_forbidden');
    throw new Forbidden(domainRefusal(host, undefined, site.id));
  }
}

export const hostedScreenshotRoute: ApiRoute = {
  method: 'POST',
  path: '/api/screenshot',
  operationId: 'captureScreenshot',
  summary: 'Capture a screenshot',
  description:
    'Renders the URL in Chromium and returns the PNG (or the format asked for: JPEG, WebP, or a PDF printed from the page) as a data URI. Checks, in order: the key (401), the site (400 without site_id on a full-access key, ' +
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
    403: 'The URL\'s host, or that of a page it redirects or navigates to, is not among the site\'s allowed domains; or the site key belongs to another site',
    404: 'The site does not exist or belongs to another account',
    406: 'Accept allows neither JSON nor the media type of the requested format',
    408: 'The page took too long to load, or no element matching waitForSelector became visible in time',
    429: 'Rate limit exceeded; see Retry-After',
    500: 'Screenshot generation failed',
  },
  handler: ({ store, renderer, limiter, logger, resultCache }) =>
    async (ctx) => {
      const started = performance.now();
      const { site_id: siteId, ...given } = validateBody(ctx.request.body);
      const { key, account } = principalOf(ctx);
      const site = await resolveSite(store, key, siteId);
      checkDomain(key, site, given.url);
      await limiter.consume(ctx, key.id, account.rateLimitPerMinute);

      const raw = rawImageFormat(ctx, given.format);
      const body = withAcceptedFormat(given, raw, validateBody);

      const usage = { accountId: account.id, siteId: site.id, keyId: key.id };
      let answer: Awaited<ReturnType<typeof captureScreenshot>>;
      try {
        // The domains travel with the capture, so that the renderer holds every page it loads to them.
        const scope = key.restrictDomains ? { allowedDomains: site.allowedDomains } : {};
        // Sites never share entries: the site is part of the key.
        const policy = { cache: resultCache, ttlSeconds: body.cacheTtl ?? 0, scope: { mode: 'hosted', siteId: site.id } as const, logger };
        answer = await captureScreenshot(ctx, renderer, { ...toCaptureRequest(body), ...scope }, started, policy);
      } catch (err) {
        // The page went outside the domains: the same refusal as for the URL, found later.
        if (isDomainRefusal(err)) recordAuthFailure('domain_forbidden');
        await store.recordUsage({ ...usage, outcome: 'failure', bytes: 0 }).catch((usageErr: unknown) => logger.error({ err: usageErr }, 'Failed to record usage'));
        throw err;
      }
      await store.recordUsage({ ...usage, outcome: 'capture', bytes: answer.body.fileSize });
      sendScreenshot(ctx, { ...answer, body: { ...answer.body, site_id: site.id } }, raw);
    },
};
