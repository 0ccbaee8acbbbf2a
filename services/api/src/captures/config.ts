import { ConfigError, readBool, readInt, readOptionalString, type Env } from '../../../../lib/env.ts';
import type { RetryPolicy } from '../../../../lib/jobs/retry.ts';
import { readPublicBaseUrl } from '../public-base-url.ts';

/** Asynchronous captures and their webhooks (docs/async.md): the job runner's settings and the bounds. */
export interface CapturesConfig {
  /** ASYNC_CAPTURES: false turns the /captures routes and the job runner off. */
  enabled: boolean;
  /** JOB_CONCURRENCY: jobs (captures and webhook deliveries) running at once in one API process. */
  concurrency: number;
  /** ASYNC_CAPTURE_SHARE_PERCENT: the share of the renderers' slots asynchronous captures may hold, so interactive clients are never crowded out. */
  sharePercent: number;
  /** JOB_LEASE_MS: how long a claimed job is held without renewal before another process may take it. */
  leaseMs: number;
  /** JOB_POLL_INTERVAL_MS: how often an idle process looks for due jobs. */
  pollIntervalMs: number;
  /** ASYNC_MAX_QUEUED_PER_ACCOUNT: queued and running captures an account (or the self-hosted API) may have; past it a submit is a 429. */
  maxQueuedPerOwner: number;
  /** CAPTURE_RESULT_TTL_SECONDS: how long a finished capture and its image are kept. */
  resultTtlMs: number;
  capture: RetryPolicy;
  /**
   * timeoutMs (WEBHOOK_TIMEOUT_MS): one attempt's overall deadline, connection, headers and body
   * together; concurrency (WEBHOOK_CONCURRENCY): deliveries at once in one process;
   * concurrencyPerHost (WEBHOOK_CONCURRENCY_PER_HOST): of those, to one target host.
   */
  webhook: RetryPolicy & { timeoutMs: number; concurrency: number; concurrencyPerHost: number };
  /** PUBLIC_BASE_URL (public-base-url.ts): statusUrl, Location and the webhook's URLs start with it, never with the request's Host. */
  publicBaseUrl: string;
  /** WEBHOOK_SIGNING_SECRET: self-hosted mode's webhook signing secret (hosted mode signs with each key's own). */
  selfHostedSigningSecret: string | undefined;
}

/** The documented maximum of captures in one batch submit. */
export const MAX_BATCH = 100;

export function loadCapturesConfig(env: Env): CapturesConfig {
  const secret = readOptionalString(env, 'WEBHOOK_SIGNING_SECRET');
  if (secret !== undefined && secret.length < 32) throw new ConfigError('WEBHOOK_SIGNING_SECRET must be at least 32 characters (e.g. openssl rand -hex 32)');
  const webhookBase = readInt(env, 'WEBHOOK_RETRY_BASE_MS', 30_000, { min: 1, max: 3_600_000 });
  const captureBase = readInt(env, 'ASYNC_CAPTURE_RETRY_BASE_MS', 5000, { min: 1, max: 3_600_000 });
  const concurrency = readInt(env, 'JOB_CONCURRENCY', 8, { min: 1, max: 1000 });
  // Half the runner's slots by default, so that slow receivers never hold the rest.
  const webhookConcurrency = readInt(env, 'WEBHOOK_CONCURRENCY', Math.max(1, Math.floor(concurrency / 2)), { min: 1, max: 1000 });
  return {
    enabled: readBool(env, 'ASYNC_CAPTURES', true),
    concurrency,
    sharePercent: readInt(env, 'ASYNC_CAPTURE_SHARE_PERCENT', 50, { min: 1, max: 100 }),
    leaseMs: readInt(env, 'JOB_LEASE_MS', 30_000, { min: 100, max: 3_600_000 }),
    pollIntervalMs: readInt(env, 'JOB_POLL_INTERVAL_MS', 1000, { min: 10, max: 60_000 }),
    maxQueuedPerOwner: readInt(env, 'ASYNC_MAX_QUEUED_PER_ACCOUNT', 1000, { min: 1, max: 10_000_000 }),
    resultTtlMs: readInt(env, 'CAPTURE_RESULT_TTL_SECONDS', 86_400, { min: 1, max: 30 * 86_400 }) * 1000,
    capture: { maxAttempts: readInt(env, 'ASYNC_CAPTURE_MAX_ATTEMPTS', 3, { min: 1, max: 20 }), baseDelayMs: captureBase, maxDelayMs: Math.max(captureBase, 300_000) },
    webhook: {
      // 12 attempts from a 30 s step doubling to a 1 h cap: at least 2.5 h of retries, jitter included.
      maxAttempts: readInt(env, 'WEBHOOK_MAX_ATTEMPTS', 12, { min: 1, max: 50 }),
      baseDelayMs: webhookBase,
      maxDelayMs: readInt(env, 'WEBHOOK_RETRY_MAX_MS', 3_600_000, { min: webhookBase, max: 86_400_000 }),
      timeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
      concurrency: webhookConcurrency,
      concurrencyPerHost: readInt(env, 'WEBHOOK_CONCURRENCY_PER_HOST', Math.max(1, Math.floor(webhookConcurrency / 2)), { min: 1, max: 1000 }),
    },
    selfHostedSigningSecret: secret,
    publicBaseUrl: readPublicBaseUrl(env),
  };
}
