import type { Context, Middleware } from 'koa';
import type { ErrorObject } from 'ajv';
import { BadRequest, NotAcceptable } from '../../../../lib/errors.ts';
import type { PageReport } from '../../../renderer/src/report/page-report.ts';
import { evaluateChecks, type Checks, type Verdict } from '../monitors/checks.ts';
import { abortWhenClientGoes } from '../../../../lib/http/client-gone.ts';
import { DEFAULT_PROFILE, PROFILE_NAMES, type ProfileName } from '../../../renderer/src/capture/profiles.ts';
import { HTML_DOCUMENT_URL, type CaptureRequest, type CaptureResult, type Renderer } from '../../../renderer/src/renderer.ts';
import { compileValidator, type MessageRule } from '../validation.ts';
import { journeyJson } from '../../../renderer/src/capture/journey.ts';
import {
  captureOptionsMessages,
  captureOptionsOf,
  captureOptionsProblems,
  captureOptionsProperties,
  captureOptionsRules,
  checksOf,
  formatOf,
  type CaptureOptionsBody,
} from './capture-options.ts';
import { MIME_TYPES, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';
import { rawImageFormat, sendScreenshot, sendStoredScreenshot, type ScreenshotAnswer } from './screenshot-answer.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { captureThroughCache, type CachePolicy } from '../result-cache/cached-capture.ts';
import type { ResultCache } from '../result-cache/result-cache.ts';
import { SELF_HOSTED_DESTINATIONS } from '../storage/configured-destinations.ts';
import { newCaptureId, rethrowStorage, type StorageDelivery, type StorageOption } from '../storage/delivery.ts';
import { storageOptionMessages, storageOptionProblems, storageOptionSchema } from '../storage/schemas.ts';

export const MAX_URL_LENGTH = 8192;
export const MIN_WAIT_MS = 1000;
export const MAX_WAIT_MS = 8000;

/** SPEC 2.1, the screenshot request, and the options beyond it (capture-options.ts). */
export interface ScreenshotBody extends CaptureOptionsBody {
  /** Required unless html is given (captureOptionsRules). */
  url?: string;
  quality?: ProfileName;
  wait?: number;
  fullPage?: boolean;
  removeAds?: boolean;
}

export const screenshotBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', format: 'http-url', maxLength: MAX_URL_LENGTH },
    quality: { type: 'string', enum: [...PROFILE_NAMES] },
    wait: { type: 'number', minimum: MIN_WAIT_MS, maximum: MAX_WAIT_MS },
    fullPage: { type: 'boolean' },
    removeAds: { type: 'boolean' },
    ...captureOptionsProperties,
  },
  ...captureOptionsRules,
} as const;

export const screenshotMessages: MessageRule[] = [
  // The body's own url: a goto step's missing url is the step's mistake (capture-options.ts).
  (e: ErrorObject) => (e.keyword === 'required' && e.params.missingProperty === 'url' && e.instancePath === '' ? 'URL is required' : undefined),
  (e: ErrorObject) =>
    e.instancePath === '/url'
      ? e.keyword === 'maxLength'
        ? `Invalid URL: longer than ${MAX_URL_LENGTH} characters`
        : 'Invalid URL: a valid http or https URL is required'
      : undefined,
  (e: ErrorObject) => (e.instancePath === '/quality' ? `quality must be one of ${PROFILE_NAMES.join(', ')}` : undefined),
  (e: ErrorObject) => (e.instancePath === '/wait' ? `wait must be a number of milliseconds from ${MIN_WAIT_MS} to ${MAX_WAIT_MS}` : undefined),
  (e: ErrorObject) => (e.instancePath === '/fullPage' || e.instancePath === '/removeAds' ? `${e.instancePath.slice(1)} must be a boolean` : undefined),
  ...captureOptionsMessages,
];

export const validateScreenshotBody = compileValidator<ScreenshotBody>(screenshotBodySchema, screenshotMessages, captureOptionsProblems);

/** Self-hosted POST /screenshot and /captures: the body, and `storage` naming a destination of STORAGE_DESTINATIONS (docs/storage.md). */
export type SelfHostedScreenshotBody = ScreenshotBody & { storage?: StorageOption };
export const selfHostedScreenshotBodySchema = {
  ...screenshotBodySchema,
  properties: { ...screenshotBodySchema.properties, storage: storageOptionSchema },
} as const;
export const selfHostedScreenshotMessages: MessageRule[] = [...storageOptionMessages, ...screenshotMessages];
export const selfHostedScreenshotProblems = (body: SelfHostedScreenshotBody) => [...captureOptionsProblems(body), ...storageOptionProblems(body)];
const validateSelfHostedBody = compileValidator<SelfHostedScreenshotBody>(selfHostedScreenshotBodySchema, selfHostedScreenshotMessages, selfHostedScreenshotProblems);

/** Self-hosted mode without STORAGE_DESTINATIONS: `storage` names nothing it could write to. */
export const STORAGE_NOT_CONFIGURED =
  'storage needs a destination: in self-hosted mode they are configured with STORAGE_DESTINATIONS, which is not set (docs/storage.md#self-hosted-mode)';

/**
 * The body with the format that Accept chose when the body named none, validated again when that
 * is pdf: the rules of format pdf (no fullPage, no selector) hold however pdf was asked for.
 */
export function withAcceptedFormat<T extends ScreenshotBody>(body: T, rawFormat: CaptureFormat | undefined, validate: (body: unknown) => T): T {
  if (body.report && rawFormat !== undefined) throw new NotAcceptable('Not acceptable: a report is answered in JSON beside the image; accept application/json or leave report out');
  if (body.format !== undefined || rawFormat === undefined || rawFormat === 'png') return body;
  const chosen = { ...body, format: rawFormat };
  return rawFormat === 'pdf' ? validate(chosen) : chosen;
}

/**
 * Applies the spec's defaults (standard quality, removeAds true, fullPage false) and copies the
 * options that were given, `format` as withAcceptedFormat left it.
 */
export function toCaptureRequest(body: ScreenshotBody): CaptureRequest {
  return {
    url: body.url ?? HTML_DOCUMENT_URL,
    quality: body.quality ?? DEFAULT_PROFILE,
    ...(body.wait !== undefined ? { wait: body.wait } : {}),
    fullPage: body.fullPage ?? false,
    removeAds: body.removeAds ?? true,
    ...captureOptionsOf(body),
  };
}

/** SPEC 2.2's result, plus waitMs and (for full-page and element captures) truncated. */
export type ScreenshotResponse = { success: true; image: string } & ResultFields;

/** The answer's fields besides the image: also what an asynchronous capture keeps and its webhook carries. */
export type ResultFields = {
  url: string;
  quality: ProfileName;
  width: number;
  height: number;
  fileSize: number;
  processingTimeMs: number;
  waitMs: number;
  truncated?: boolean;
  /** Only when the request gave a cacheTtl above 0: whether the result came from the cache. */
  cached?: boolean;
  /** Only when the request asked for a report; with checks, their verdict as report.checks. */
  report?: PageReport & { checks?: Verdict };
  /** Only when the request had steps: each step's outcome and time, and the capture steps' pictures (data URIs). */
  journey?: Record<string, unknown>;
};

export function resultFields(request: CaptureRequest, result: CaptureResult, started: number, cached: boolean | undefined, checks?: Checks): ResultFields {
  return {
    url: request.url,
    quality: request.quality,
    width: result.width,
    height: result.height,
    fileSize: result.fileSize,
    processingTimeMs: Math.round(performance.now() - started),
    waitMs: result.waitMs,
    ...(request.fullPage || request.selector !== undefined ? { truncated: result.truncated } : {}),
    ...(cached !== undefined ? { cached } : {}),
    ...(result.report ? { report: checks ? { ...result.report, checks: evaluateChecks(result.report, checks) } : result.report } : {}),
    ...(result.journey ? { journey: journeyJson(result.journey) } : {}),
  };
}

/**
 * Captures for a client (or reuses a cached capture, when the request's cacheTtl allows) and
 * builds the answer. A client that goes away cancels its capture. Shared by the self-hosted and the
 * hosted route, which differ only in what they check first and in the cache scope.
 */
export async function captureScreenshot(
  ctx: Context,
  renderer: Renderer,
  request: CaptureRequest,
  started: number,
  cachePolicy?: CachePolicy,
  checks?: Checks,
): Promise<ScreenshotAnswer & { body: ScreenshotResponse }> {
  const clientGone = abortWhenClientGoes(ctx);
  try {
    const { result, cached } = await captureThroughCache(cachePolicy, request, () =>
      renderer.capture(request, { signal: clientGone.signal, requestId: ctx.state.requestId, timing: ctx.state.upstreamTiming }),
    );
    const format = formatOf(request);
    const body: ScreenshotResponse = {
      success: true,
      image: `data:${MIME_TYPES[format]};base64,${result.image.toString('base64')}`,
      ...resultFields(request, result, started, cached, checks),
    };
    return { body, image: result.image, format };
  } finally {
    clientGone.dispose();
  }
}

/**
 * POST /screenshot: validates, captures, and answers with SPEC 2.2's result (or the raw image, by
 * Accept); with `storage`, writes the image to a configured destination (the hosted delivery, its
 * guard and bounds) and answers where it went instead of the image.
 */
export function screenshotHandler(renderer: Renderer, resultCache: ResultCache | undefined, logger: Logger, storage?: StorageDelivery): Middleware {
  return async (ctx) => {
    const started = performance.now();
    const { storage: option, ...given } = validateSelfHostedBody(ctx.request.body);
    if (option && !storage) throw new BadRequest(STORAGE_NOT_CONFIGURED);
    const raw = rawImageFormat(ctx, given.format);
    if (option && raw !== undefined) throw new NotAcceptable('Not acceptable: with storage the answer is JSON saying where the image went; accept application/json');
    const body = withAcceptedFormat(given, raw, validateScreenshotBody);
    // The destination exists and its endpoint passes the guard before anything renders.
    if (option && storage) await storage.prepareNow(SELF_HOSTED_DESTINATIONS, option).catch(rethrowStorage);
    const policy: CachePolicy = { cache: resultCache, ttlSeconds: body.cacheTtl ?? 0, scope: { mode: 'self-hosted' }, logger };
    const answer = await captureScreenshot(ctx, renderer, toCaptureRequest(body), started, policy, checksOf(body));
    if (!option || !storage) {
      sendScreenshot(ctx, answer, raw);
      return;
    }
    const stored = await storage
      .deliver(SELF_HOSTED_DESTINATIONS, option, { id: newCaptureId(), createdAt: new Date(), format: answer.format, image: answer.image })
      .catch(rethrowStorage);
    sendStoredScreenshot(ctx, answer, stored);
  };
}
