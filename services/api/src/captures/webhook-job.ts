/**
 * The `webhook` job: tells a capture's webhookUrl its final outcome, at least once. One job per
 * capture (idempotency key `webhook:<capture id>`), retried with exponential backoff and jitter on a
 * network error, a timeout or a non-2xx answer, and never sent again once the receiver said 2xx.
 *
 * The body carries the capture's metadata and a URL to fetch the image from, not the image: an
 * image can be megabytes, which receivers (serverless functions, chat hooks) often refuse or time
 * out on, and every retry would send it again; the receiver fetches it once, with its key, when it
 * wants it, while the result is kept (CAPTURE_RESULT_TTL_SECONDS).
 */
import type { JobHandler, JobRunner } from '../../../../lib/jobs/runner.ts';
import { PermanentJobError } from '../../../../lib/jobs/retry.ts';
import type { Job } from '../../../../lib/store/jobs.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { SIGNATURE_HEADER, signatureHeader } from '../../../../lib/webhook-signature.ts';
import type { NetworkGuard } from '../../../renderer/src/guard/network-guard.ts';
import { payloadOf, statusUrlOf, type CaptureMetadata } from './capture-job.ts';
import type { StoredObject } from '../storage/delivery.ts';
import type { CapturesConfig } from './config.ts';
import { recordWebhookDelivery } from './metrics.ts';
import { deliverWebhook } from './webhook-delivery.ts';

export const WEBHOOK_JOB = 'webhook';

export interface WebhookPayload {
  captureId: string;
}

export const webhookKeyOf = (captureId: string) => `webhook:${captureId}`;

/** The group a delivery counts in for WEBHOOK_CONCURRENCY_PER_HOST: its target's host name (every port of it together). */
export const webhookGroupOf = (webhookUrl: string) => `webhook:${URL.parse(webhookUrl)?.hostname.toLowerCase() ?? ''}`;

/** Queues the capture's webhook, once per capture (its idempotency key), in its host's group. */
export async function queueWebhook(runner: JobRunner, capture: Job, runAt: Date): Promise<void> {
  const { webhookUrl } = payloadOf(capture);
  if (!webhookUrl) return;
  await runner.enqueue(WEBHOOK_JOB, capture.ownerId, { captureId: capture.id }, { idempotencyKey: webhookKeyOf(capture.id), runAt, group: webhookGroupOf(webhookUrl) });
}

/** What the receiver gets. */
export interface WebhookBody {
  id: string;
  event: 'capture.succeeded' | 'capture.failed';
  status: 'succeeded' | 'failed';
  createdAt: string;
  finishedAt: string | null;
  attempts: number;
  /** The capture's metadata (the synchronous answer without the image); null when it failed. */
  metadata: Record<string, unknown> | null;
  error: string | null;
  /** GET it with the API key and `Accept: image/*` for the image, or without for the JSON status; null when the image went to a storage destination. */
  imageUrl: string | null;
  /** With the storage option: the object the capture was written to (bucket, key, url, etag, presigned URL); null otherwise. */
  storage: StoredObject | null;
  statusUrl: string;
}

export function webhookBodyOf(capture: Job): WebhookBody {
  const statusUrl = statusUrlOf(capture);
  const succeeded = capture.state === 'succeeded';
  const stored = succeeded ? ((capture.result as unknown as CaptureMetadata | null)?.storage ?? null) : null;
  return {
    id: capture.id,
    event: succeeded ? 'capture.succeeded' : 'capture.failed',
    status: succeeded ? 'succeeded' : 'failed',
    createdAt: capture.createdAt.toISOString(),
    finishedAt: capture.finishedAt?.toISOString() ?? null,
    attempts: capture.attempts,
    metadata: succeeded ? capture.result : null,
    error: succeeded ? null : capture.lastError,
    imageUrl: succeeded && !stored ? statusUrl : null,
    storage: stored,
    statusUrl,
  };
}

export interface WebhookJobDeps {
  store: Store;
  config: CapturesConfig;
  guard: NetworkGuard;
}

/** Hosted captures are signed with their key's signing secret, self-hosted ones with WEBHOOK_SIGNING_SECRET. */
async function signingSecretFor(deps: WebhookJobDeps, capture: Job): Promise<string> {
  const hosted = payloadOf(capture).hosted;
  const secret = hosted ? await deps.store.getSigningSecret(hosted.keyId) : deps.config.selfHostedSigningSecret;
  if (!secret) throw new PermanentJobError(hosted ? 'the API key that submitted the capture has no signing secret any more (deleted)' : 'WEBHOOK_SIGNING_SECRET is not set');
  return secret;
}

export function webhookJobHandler(deps: WebhookJobDeps): JobHandler {
  const { store, config, guard } = deps;
  return {
    type: WEBHOOK_JOB,
    retry: config.webhook,
    retentionMs: config.resultTtlMs,
    // A bound of their own, and one per host: receivers that hold their answers cannot take the
    // runner's slots from captures and monitors, nor one host's from the others'.
    concurrency: config.webhook.concurrency,
    groupConcurrency: config.webhook.concurrencyPerHost,
    async run(job, { signal }) {
      const { captureId } = job.payload as unknown as WebhookPayload;
      const capture = await store.getJob(captureId);
      if (!capture) throw new PermanentJobError(`capture ${captureId} no longer exists`);
      // Queued just before the capture's outcome was written: try again once it is.
      if (capture.state !== 'succeeded' && capture.state !== 'failed') throw new Error(`capture ${captureId} is not finished yet`);
      const { webhookUrl } = payloadOf(capture);
      if (!webhookUrl) throw new PermanentJobError(`capture ${captureId} has no webhookUrl`);
      const body = JSON.stringify(webhookBodyOf(capture));
      const headers = {
        [SIGNATURE_HEADER]: signatureHeader(await signingSecretFor(deps, capture), body),
        'Viewfinder-Event': capture.state === 'succeeded' ? 'capture.succeeded' : 'capture.failed',
        // The same on every attempt: receivers drop a delivery they have already handled.
        'Viewfinder-Delivery': job.id,
      };
      const started = performance.now();
      try {
        const answer = await deliverWebhook(guard, { url: webhookUrl, body, headers, timeoutMs: config.webhook.timeoutMs, signal });
        recordWebhookDelivery('delivered', (performance.now() - started) / 1000);
        return { result: { status: answer.status, deliveredAt: new Date().toISOString() } };
      } catch (err) {
        recordWebhookDelivery(err instanceof PermanentJobError ? 'refused' : 'failed', (performance.now() - started) / 1000);
        throw err;
      }
    },
  };
}
