/**
 * The `capture` job: one asynchronous capture, rendered through the same Renderer (the same
 * dispatch, the same result cache) as POST /api/screenshot, holding at most a bounded share of the
 * renderers' slots so that interactive clients are never crowded out. On its final outcome it
 * counts usage like a synchronous capture and queues its webhook.
 *
 * The image goes to the blob store (BLOB_STORE) under captures/<job id>, where any replica reads it,
 * and is removed by the runner's sweep once the job is past its retention. Without a blob store
 * (some tests) it is kept beside the job in the store, as before the blob store existed.
 */
import type { BlobStore } from '../../../../lib/blobs/blob-store.ts';
import { isHttpError } from '../../../../lib/errors.ts';
import type { JobHandler } from '../../../../lib/jobs/runner.ts';
import { PermanentJobError } from '../../../../lib/jobs/retry.ts';
import type { Logger } from '../../../../lib/logger.ts';
import type { Job } from '../../../../lib/store/jobs.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { untilStoreAnswers } from '../../../../lib/store/unavailable.ts';
import { MIME_TYPES, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';
import type { CaptureRequest, Renderer } from '../../../renderer/src/renderer.ts';
import { captureThroughCache } from '../result-cache/cached-capture.ts';
import { resultFields, type ResultFields } from '../routes/screenshot.ts';
import type { ResultCache } from '../result-cache/result-cache.ts';
import type { CapturesConfig } from './config.ts';
import { recordAsyncCaptureDone } from './metrics.ts';
import { SELF_HOSTED_DESTINATIONS } from '../storage/configured-destinations.ts';
import { StorageFailure, type StorageDelivery, type StorageOption, type StoredObject } from '../storage/delivery.ts';

export const CAPTURE_JOB = 'capture';

/** What a capture job carries: plain JSON, checked at submit. */
export interface CapturePayload {
  request: CaptureRequest;
  /** `https://host/api/captures`: the job's status and image are at statusBase/id (statusUrlOf). */
  statusBase: string;
  webhookUrl?: string;
  cacheTtl?: number;
  /** Hosted mode: whose capture it is, for usage, the cache scope and the webhook's signing key. */
  hosted?: { accountId: string; siteId: string; keyId: string };
  /** Hosted mode: write the image to this registered destination (by name; never its credentials). */
  storage?: StorageOption;
}

/** The metadata of a finished capture: the synchronous answer's fields without the image; with storage, where the image went. */
export type CaptureMetadata = ResultFields & { format: CaptureFormat; site_id?: string; storage?: StoredObject };

export const payloadOf = (job: Job) => job.payload as unknown as CapturePayload;

/** Where the client (and the webhook's receiver) reads the status and the image. */
export const statusUrlOf = (job: Job) => `${payloadOf(job).statusBase}/${job.id}`;

const RESULTS = 'captures/';
/** Where a finished capture's image is in the blob store. */
export const resultKeyOf = (jobId: string) => RESULTS + jobId;
/**
 * A result's image is removed this long after its job's retention ends (by the blob's own time of
 * writing, a moment before the job's finish), so that no clock skew removes it while its job answers.
 */
const SWEEP_MARGIN_MS = 10 * 60 * 1000;
/** The runner sweeps every minute; listing every result that often would cost an object store more than it frees. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

export interface CaptureJobDeps {
  store: Store;
  renderer: Renderer;
  config: CapturesConfig;
  logger: Logger;
  resultCache?: ResultCache | undefined;
  /** Where the images go; without one they are kept beside the job in the store. */
  blobs?: BlobStore | undefined;
  /** Queues the capture's webhook (idempotent per capture). */
  queueWebhook(capture: Job): Promise<void>;
  /** Uploads to storage destinations (hosted). */
  storage?: StorageDelivery | undefined;
}

/**
 * Writes a capture to its storage destination. Refusals another attempt cannot change (the guard,
 * the size bound, a destination deleted since the submit) fail the job at once; the rest (wrong
 * keys, no such bucket, no DNS answer, a timeout) are retried with the capture's backoff, since
 * the owner may fix the destination meanwhile. The reason becomes the job's lastError.
 */
async function deliverToStorage(deps: CaptureJobDeps, job: Job, payload: CapturePayload, format: CaptureFormat, image: Buffer, signal: AbortSignal): Promise<StoredObject> {
  if (!deps.storage || !payload.storage) throw new PermanentJobError('no storage destinations are available on this service (STORAGE_DESTINATIONS in self-hosted mode)');
  try {
    // Hosted: the account's destinations; self-hosted: the configured ones.
    return await deps.storage.deliver(payload.hosted?.accountId ?? SELF_HOSTED_DESTINATIONS, payload.storage, { id: job.id, createdAt: job.createdAt, format, image }, signal);
  } catch (err) {
    if (err instanceof StorageFailure) throw err.permanent ? new PermanentJobError(err.message) : new Error(err.message);
    if (isPermanent(err)) throw new PermanentJobError((err as Error).message);
    throw err;
  }
}

/** Client errors (a refused address, a domain outside the site's, a selector that matched nothing) fail at once; the rest are retried. */
function isPermanent(err: unknown): boolean {
  return isHttpError(err) && err.status < 500 && err.status !== 408 && err.status !== 429;
}

export function captureJobHandler(deps: CaptureJobDeps): JobHandler {
  const { store, renderer, config, logger } = deps;
  let sweptAt = Number.NEGATIVE_INFINITY;
  const recordUsage = async (payload: CapturePayload, outcome: 'capture' | 'failure', bytes: number) => {
    if (!payload.hosted) return;
    const { accountId, siteId, keyId } = payload.hosted;
    await store.recordUsage({ accountId, siteId, keyId, outcome, bytes }).catch((err: unknown) => logger.error({ err }, 'Failed to record usage'));
  };

  return {
    type: CAPTURE_JOB,
    retry: config.capture,
    retentionMs: config.resultTtlMs,
    // A bounded share of the slots the renderers report, never less than one.
    concurrency: () => Math.max(1, Math.floor((renderer.stats().capacity * config.sharePercent) / 100)),
    async run(job, { signal }) {
      const payload = payloadOf(job);
      const { request } = payload;
      const started = performance.now();
      let outcome;
      try {
        const scope = payload.hosted ? ({ mode: 'hosted', siteId: payload.hosted.siteId } as const) : ({ mode: 'self-hosted' } as const);
        outcome = await captureThroughCache({ cache: deps.resultCache, ttlSeconds: payload.cacheTtl ?? 0, scope, logger }, request, () =>
          renderer.capture(request, { signal, requestId: job.id }),
        );
      } catch (err) {
        if (isPermanent(err)) throw new PermanentJobError((err as Error).message);
        throw err;
      }
      const { result, cached } = outcome;
      const { journey, ...fields } = resultFields(request, result, started, cached);
      const metadata: CaptureMetadata = {
        ...fields,
        // The step report, not the capture steps' pictures: a job row holds metadata, not images.
        ...(journey ? { journey: { steps: journey.steps } } : {}),
        format: result.format,
        ...(payload.hosted ? { site_id: payload.hosted.siteId } : {}),
      };
      const blobs = deps.blobs;
      if (payload.storage) {
        // In the client's bucket instead of here: the job keeps where it went, not the image.
        metadata.storage = await deliverToStorage(deps, job, payload, result.format, result.image, signal);
      } else if (blobs) {
        // Written before the job is marked done, so that a succeeded job always has its image. The
        // image is in hand: a store that cannot be reached for a moment (GridFS on MongoDB) delays the
        // write, as it does the webhook's below, rather than failing the job and capturing again.
        await untilStoreAnswers(() => blobs.put(resultKeyOf(job.id), result.image, { contentType: MIME_TYPES[result.format] }), signal, (err) => logger.warn({ err: String(err), jobId: job.id }, 'The store cannot be reached to keep a capture\'s image; trying again until it can'));
      }
      await recordUsage(payload, 'capture', result.fileSize);
      // Queued before the job is marked done; the delivery waits until it is (webhook-job.ts).
      await untilStoreAnswers(() => deps.queueWebhook(job), signal, (err) => logger.warn({ err: String(err), jobId: job.id }, 'The store cannot be reached to queue a webhook; trying again until it can'));
      recordAsyncCaptureDone('succeeded', job.createdAt);
      return { result: metadata as unknown as Record<string, unknown>, ...(payload.storage || blobs ? {} : { blob: result.image }) };
    },
    async sweep(now) {
      if (!deps.blobs || now.getTime() - sweptAt < SWEEP_EVERY_MS) return;
      sweptAt = now.getTime();
      const before = now.getTime() - config.resultTtlMs - SWEEP_MARGIN_MS;
      for await (const { key, lastModified } of deps.blobs.list(RESULTS)) {
        if (lastModified.getTime() < before) await deps.blobs.delete(key);
      }
    },
    // The values a journey typed (fill: a password) are needed only while it runs: once the job has
    // ended its row keeps each fill without its value.
    endedPayload(job) {
      const payload = payloadOf(job);
      if (!payload.request.steps) return job.payload;
      const steps = payload.request.steps.map((step) => (step.action === 'fill' ? { ...step, value: '' } : step));
      return { ...payload, request: { ...payload.request, steps } } as unknown as Record<string, unknown>;
    },
    async onFailure(job) {
      await recordUsage(payloadOf(job), 'failure', 0);
      await deps.queueWebhook(job);
      recordAsyncCaptureDone('failed', job.createdAt);
    },
  };
}
