import type { Middleware } from 'koa';
import { ServiceUnavailable } from '../../../../lib/errors.ts';
import { SELF_HOSTED_OWNER, sendAccepted, type CaptureJobs } from '../captures/service.ts';
import { submitParser, submitSchemas } from '../captures/submit-body.ts';
import { captureOptionsProblems, withoutReport } from './capture-options.ts';
import { screenshotBodySchema, screenshotMessages, toCaptureRequest, type ScreenshotBody } from './screenshot.ts';

/**
 * Self-hosted asynchronous captures: POST /captures and GET /captures/:captureId, behind API_KEY
 * like /screenshot. One owner (the service itself); no rate limit, as for /screenshot, but the same
 * bound on waiting captures. Webhooks are signed with WEBHOOK_SIGNING_SECRET.
 */
const asyncBody = withoutReport(screenshotBodySchema, 'an asynchronous capture');
export const selfHostedSubmitSchemas = submitSchemas(asyncBody.schema);
const parse = submitParser<ScreenshotBody>(selfHostedSubmitSchemas.single, [asyncBody.message, ...screenshotMessages], captureOptionsProblems);

const off = () => new ServiceUnavailable('Asynchronous captures are unavailable on this service (ASYNC_CAPTURES=false, or DATA_DIR is not writable: see the log)');

export function submitCapturesHandler(captures: CaptureJobs | undefined, signingSecret: string | undefined): Middleware {
  return async (ctx) => {
    if (!captures) throw off();
    const { batch, items } = parse(ctx);
    const submissions = items.map(({ webhookUrl, idempotencyKey, ...body }) => ({ request: toCaptureRequest(body), webhookUrl, cacheTtl: body.cacheTtl, idempotencyKey }));
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
