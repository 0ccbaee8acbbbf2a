/**
 * Asynchronous captures: what POST /captures and GET /captures/{id} do in either mode, on the job
 * runner (lib/jobs/runner.ts) with two handlers, `capture` and `webhook`. The routes only check who
 * asks and what they send; submitting and answering the status are the same here for both modes.
 */
import type { Context } from 'koa';
import type { BlobStore } from '../../../../lib/blobs/blob-store.ts';
import { BadRequest, Conflict, NotFound, TooManyRequests } from '../../../../lib/errors.ts';
import { createJobRunner, type JobRunner } from '../../../../lib/jobs/runner.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS, type Job } from '../../../../lib/store/jobs.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { MIME_TYPES, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';
import type { NetworkGuard } from '../../../renderer/src/guard/network-guard.ts';
import type { CaptureRequest, Renderer } from '../../../renderer/src/renderer.ts';
import type { ResultCache } from '../result-cache/result-cache.ts';
import { rawImageFormat, sendScreenshot } from '../routes/screenshot-answer.ts';
import { CAPTURE_JOB, captureJobHandler, payloadOf, resultKeyOf, statusUrlOf, type CaptureMetadata, type CapturePayload } from './capture-job.ts';
import type { CapturesConfig } from './config.ts';
import { reportJobCounts } from './metrics.ts';
import { checkWebhookUrl } from './webhook-delivery.ts';
import { queueWebhook, webhookJobHandler, webhookKeyOf } from './webhook-job.ts';
import type { StorageDelivery, StorageOption } from '../storage/delivery.ts';

/** One capture to submit, checked by the route. */
export interface Submission {
  request: CaptureRequest;
  webhookUrl?: string | undefined;
  cacheTtl?: number | undefined;
  idempotencyKey?: string | undefined;
  hosted?: CapturePayload['hosted'];
  /** Hosted only: the registered destination to write the image to instead of keeping it. */
  storage?: StorageOption | undefined;
}

export interface SubmitContext {
  ctx: Context;
  /** The account id, or SELF_HOSTED_OWNER. */
  ownerId: string;
  /** `/api/captures` or `/captures`: the status URLs are under it. */
  basePath: string;
  /** Takes one capture from the caller's rate limit (hosted), or nothing (self-hosted). */
  consumeRateLimit(): Promise<void>;
  /** Whether a webhook of this caller can be signed. */
  canSign(): Promise<boolean>;
}

export const SELF_HOSTED_OWNER = 'self-hosted';

export interface Accepted {
  id: string;
  status: Job['state'];
  statusUrl: string;
}

export interface CaptureJobs {
  runner: JobRunner;
  submit(context: SubmitContext, submissions: Submission[]): Promise<Accepted[]>;
  /**
   * GET /captures/{id}: the status as JSON, or the image bytes when Accept asks for them. With
   * `siteId` (a site key), only a capture made for that site is found.
   */
  answerStatus(ctx: Context, ownerId: string, id: string, siteId?: string | null): Promise<void>;
  recent(ownerId: string, limit: number): Promise<CaptureStatus[]>;
}

export interface CaptureJobsDeps {
  store: Store;
  renderer: Renderer;
  config: CapturesConfig;
  logger: Logger;
  /** The capture guard, built from PRIVATE_NETWORK_ALLOWLIST: webhook targets pass it too. */
  guard: NetworkGuard;
  resultCache?: ResultCache | undefined;
  /** Where finished captures' images go (BLOB_STORE); without one, beside the job in the store. */
  blobs?: BlobStore | undefined;
  /** Hosted: uploads to storage destinations, for captures submitted with `storage`. */
  storage?: StorageDelivery | undefined;
}

export function createCaptureJobs(deps: CaptureJobsDeps): CaptureJobs {
  const { store, config, logger, guard } = deps;
  const runner = createJobRunner({ store, logger, concurrency: config.concurrency, leaseMs: config.leaseMs, pollIntervalMs: config.pollIntervalMs });
  // A second before the capture's outcome is written at the latest; webhook-job.ts waits for it.
  const queueWebhookSoon = (capture: Job) => queueWebhook(runner, capture, new Date(Date.now() + 1000));
  runner.register(captureJobHandler({ ...deps, queueWebhook: queueWebhookSoon }));
  runner.register(webhookJobHandler({ store, config, guard }));
  reportJobCounts(store);

  /** A job of this owner with this key, within the window: the same capture, not a new one. */
  const sameSubmit = async (ownerId: string, key: string | undefined) => {
    if (key === undefined) return null;
    const job = await store.findJobByIdempotencyKey(ownerId, key);
    return job && job.type === CAPTURE_JOB && Date.now() - job.createdAt.getTime() < DEFAULT_IDEMPOTENCY_WINDOW_MS ? job : null;
  };

  /** The blob store's copy, else the store's: results written before the blob store existed. */
  const imageOf = async (job: Job): Promise<Buffer | null> => (await deps.blobs?.getBuffer(resultKeyOf(job.id)))?.bytes ?? (await store.getJobBlob(job.id));

  const statusOf = async (job: Job): Promise<CaptureStatus> => {
    const webhookJob = payloadOf(job).webhookUrl ? await store.findJobByIdempotencyKey(job.ownerId, webhookKeyOf(job.id)) : null;
    return captureStatus(job, webhookJob);
  };

  return {
    runner,
    async submit(context, submissions) {
      const { ownerId, basePath } = context;
      const existing = await Promise.all(submissions.map((s) => sameSubmit(ownerId, s.idempotencyKey)));
      const fresh = submissions.filter((_s, i) => existing[i] === null);
      if (fresh.length > 0) {
        for (const webhookUrl of new Set(fresh.flatMap((s) => (s.webhookUrl ? [s.webhookUrl] : [])))) await checkWebhookUrl(guard, webhookUrl, config.webhook.timeoutMs);
        if (fresh.some((s) => s.webhookUrl) && !(await context.canSign())) {
          throw new Conflict(
            ownerId === SELF_HOSTED_OWNER
              ? 'webhookUrl needs WEBHOOK_SIGNING_SECRET to be set on the service, so that deliveries are signed'
              : 'This API key has no signing secret (it was created before keys had one): regenerate it to use webhooks',
          );
        }
        const waiting = await store.countJobs({ ownerId, type: CAPTURE_JOB, states: ['queued', 'running'] });
        if (waiting + fresh.length > config.maxQueuedPerOwner) {
          throw new TooManyRequests(`Too many captures waiting: ${waiting} of at most ${config.maxQueuedPerOwner} are queued or running; retry once some have finished`, 30);
        }
        for (let i = 0; i < fresh.length; i++) await context.consumeRateLimit();
      }
      const accepted: Accepted[] = [];
      for (const [i, submission] of submissions.entries()) {
        let job = existing[i] ?? null;
        if (!job) {
          const payload: CapturePayload = {
            request: submission.request,
            // From PUBLIC_BASE_URL, never from the Host header, which the caller chooses.
            statusBase: `${config.publicBaseUrl}${basePath}`,
            ...(submission.webhookUrl ? { webhookUrl: submission.webhookUrl } : {}),
            ...(submission.cacheTtl ? { cacheTtl: submission.cacheTtl } : {}),
            ...(submission.hosted ? { hosted: submission.hosted } : {}),
            // The destination's name only: its credentials are read from the store at upload, never kept in the job.
            ...(submission.storage ? { storage: submission.storage } : {}),
          };
          // Written (and committed) before the client hears 202.
          ({ job } = await runner.enqueue(CAPTURE_JOB, ownerId, payload as unknown as Record<string, unknown>, { idempotencyKey: submission.idempotencyKey ?? null }));
        }
        accepted.push({ id: job.id, status: job.state, statusUrl: statusUrlOf(job) });
      }
      return accepted;
    },
    async answerStatus(ctx, ownerId, id, siteId) {
      const job = await store.getJob(id);
      const expired = job?.expiresAt && job.expiresAt.getTime() <= Date.now();
      const otherSite = job && siteId && payloadOf(job).hosted?.siteId !== siteId;
      // Another owner's (or, for a site key, another site's) job, a webhook job, a removed one or one past its retention (not yet swept): all the same 404.
      if (!job || job.ownerId !== ownerId || job.type !== CAPTURE_JOB || expired || otherSite) throw new NotFound(`Capture ${id} not found`);
      const metadata = job.result as unknown as CaptureMetadata | null;
      const raw = rawImageFormat(ctx, metadata?.format);
      ctx.set('Cache-Control', 'no-store');
      if (raw === undefined) {
        const status = await statusOf(job);
        if (job.state === 'succeeded' && metadata?.storage) {
          // Written to the client's bucket: the answer says where, and no copy was kept here.
          status.result = { success: true, ...withoutFormat(metadata) };
        } else if (job.state === 'succeeded') {
          const image = await imageOf(job);
          if (!image) throw new NotFound(`Capture ${id} not found`);
          status.result = { success: true, image: `data:${MIME_TYPES[metadata!.format]};base64,${image.toString('base64')}`, ...withoutFormat(metadata!) };
        }
        ctx.body = status;
        return;
      }
      if (job.state !== 'succeeded') throw new Conflict(`Capture ${id} is ${job.state}: there is no image${job.state === 'failed' ? '' : ' yet'}`);
      if (metadata?.storage) throw new Conflict(`Capture ${id} was written to storage destination ${metadata.storage.destination} (${metadata.storage.key}): the image is there, not here`);
      const image = await imageOf(job);
      if (!image) throw new NotFound(`Capture ${id} not found`);
      sendScreenshot(ctx, { body: { success: true, ...withoutFormat(metadata!) }, image, format: metadata!.format as CaptureFormat }, raw);
    },
    async recent(ownerId, limit) {
      return Promise.all((await store.listJobs(ownerId, CAPTURE_JOB, limit)).map(statusOf));
    },
  };
}

function withoutFormat(metadata: CaptureMetadata): Omit<CaptureMetadata, 'format'> {
  const { format: _format, ...rest } = metadata;
  return rest;
}

export interface WebhookStatus {
  url: string;
  /** pending until a 2xx, then delivered; failed after the last attempt. */
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastError: string | null;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
}

export interface CaptureStatus {
  id: string;
  status: Job['state'];
  url: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the result is removed (finished captures only). */
  expiresAt: string | null;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  statusUrl: string;
  webhook?: WebhookStatus;
  /** Succeeded captures: the synchronous answer (SPEC 2.2's fields, site_id in hosted mode). */
  result?: Record<string, unknown>;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function captureStatus(job: Job, webhookJob: Job | null): CaptureStatus {
  const payload = payloadOf(job);
  const status: CaptureStatus = {
    id: job.id,
    status: job.state,
    url: payload.request.url,
    createdAt: job.createdAt.toISOString(),
    startedAt: iso(job.startedAt),
    finishedAt: iso(job.finishedAt),
    expiresAt: iso(job.expiresAt),
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    lastError: job.lastError,
    statusUrl: statusUrlOf(job),
  };
  if (payload.webhookUrl) {
    status.webhook = {
      url: payload.webhookUrl,
      status: webhookJob?.state === 'succeeded' ? 'delivered' : webhookJob?.state === 'failed' ? 'failed' : 'pending',
      attempts: webhookJob?.attempts ?? 0,
      lastError: webhookJob?.lastError ?? null,
      deliveredAt: webhookJob?.state === 'succeeded' ? iso(webhookJob.finishedAt) : null,
      nextAttemptAt: webhookJob?.state === 'queued' ? iso(webhookJob.runAt) : null,
    };
  }
  return status;
}

/** The batch form's answer, and the one answer of the single form. */
export function sendAccepted(ctx: Context, accepted: Accepted[], batch: boolean): void {
  ctx.status = 202;
  ctx.set('Cache-Control', 'no-store');
  if (batch) {
    ctx.body = { captures: accepted };
    return;
  }
  const [one] = accepted as [Accepted];
  ctx.set('Location', one.statusUrl);
  ctx.body = one;
}

export function badIdempotencyKey(): BadRequest {
  return new BadRequest('idempotencyKey (or the Idempotency-Key header) must be 1 to 255 printable characters');
}
