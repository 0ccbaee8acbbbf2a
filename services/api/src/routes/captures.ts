import type { Middleware } from 'koa';
import { BadRequest, ServiceUnavailable } from '../../../../lib/errors.ts';
import { SELF_HOSTED_OWNER, sendAccepted, type CaptureJobs } from '../captures/service.ts';
import { submitParser, submitSchemas } from '../captures/submit-body.ts';
import { SELF_HOSTED_DESTINATIONS } from '../storage/configured-destinations.ts';
import type { StorageDelivery } from '../storage/delivery.ts';
import { withoutReport } from './capture-options.ts';
import {
  selfHostedScreenshotBodySchema,
  selfHostedScreenshotMessages,
  selfHostedScreenshotProblems,
  STORAGE_NOT_CONFIGURED,
  toCaptureRequest,
  type SelfHostedScreenshotBody,
} from './screenshot.ts';

/**
 * Self-hosted asynchronous captures: POST /captures and GET /captures/:captureId, behind API_KEY
 * like /screenshot. One owner (the service itself); no rate limit, as for /screenshot, but the same
 * bound on waiting captures. Webhooks are signed with WEBHOOK_SIGNING_SECRET.
 */
const asyncBody = withoutReport(selfHostedScreenshotBodySchema, 'an asynchronous capture');
export const selfHostedSubmitSchemas = submitSchemas(asyncBody.schema);
const parse = submitParser<SelfHostedScreenshotBody>(selfHostedSubmitSchemas.single, [asyncBody.message, ...selfHostedScreenshotMessages], selfHostedScreenshotProblems);

const off = () => new ServiceUnavailable('Asynchronous captures are unavailable on this service (ASYNC_CAPTURES=false, or DATA_DIR is not writable: see the log)');

/** `storage` names a destination of STORAGE_DESTINATIONS, checked at submit as in hosted mode (it exists; the guard admits its endpoint). */
export function submitCapturesHandler(captures: CaptureJobs | undefined, signingSecret: string | undefined, storage?: StorageDelivery): Middleware {
  return async (ctx) => {
    if (!captures) throw off();
    const { batch, items } = parse(ctx);
    for (const { storage: option } of items) {
      if (!option) continue;
      if (!storage) throw new BadRequest(STORAGE_NOT_CONFIGURED);
      await storage.prepareLater(SELF_HOSTED_DESTINATIONS, option);
    }
    const submissions = items.map(({ webhookUrl, idempotencyKey, storage: option, ...body }) => ({
      request: toCaptureRequest(body),
      webhookUrl,
      cacheTtl: body.cacheTtl,
      idempotencyKey,
      ...(option ? { storage: option } : {}),
    }));
    const accepted = await captures.submit(
      { ctx, ownerId: SELF_HOSTED_OWNER, basePath: '/captures', consumeRateLimit: async () => {}, canSign: async () => signingSecret !== undefined },
      submissions,
    );
    sendAccepted(ctx, accepted, batch);
  };
}

export function captureStatusHandler(captures: CaptureJobs | undefined): Middleware {
  return async (ctx) => {
    if (!captures) throw off();
    await captures.answerStatus(ctx, SELF_HOSTED_OWNER, String(ctx.params.captureId ?? ''));
  };
}
