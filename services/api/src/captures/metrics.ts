/**
 * Metrics of asynchronous captures and their webhooks, in the API's registry. Jobs by state are
 * counted in the store when Prometheus scrapes, so every replica reports the same shared queue.
 */
import { Counter, Gauge } from 'prom-client';
import { createLatencyHistogram, observeTraced } from '../../../../lib/metrics.ts';
import { JOB_STATES } from '../../../../lib/store/jobs.ts';
import type { JobStore } from '../../../../lib/store/jobs.ts';
import { apiRegistry } from '../metrics.ts';

export const JOB_TYPES = ['capture', 'webhook'] as const;
const JOB_LABELS = ['type', 'state'] as const;

let countJobs: JobStore['countJobs'] | undefined;

new Gauge({
  name: 'viewfinder_jobs',
  help: 'Jobs in the store (all replicas), by type (capture, webhook) and state (queued, running, succeeded, failed); finished jobs count until their retention ends.',
  labelNames: JOB_LABELS,
  registers: [apiRegistry],
  async collect() {
    if (!countJobs) return;
    const count = countJobs;
    // A store that is down (or closed) must not take /metrics with it: the series go missing for
    // this scrape, which the API's other series and its logs explain, instead of a 500 for all.
    const rows = await Promise.all(JOB_TYPES.flatMap((type) => JOB_STATES.map(async (state) => ({ type, state, n: await count({ type, states: [state] }) })))).catch(
      () => undefined,
    );
    this.reset();
    for (const { type, state, n } of rows ?? []) this.set({ type, state }, n);
  },
});

/** Counts come from this store at each scrape. */
export function reportJobCounts(store: JobStore): void {
  countJobs = (filter) => store.countJobs(filter);
}

const OUTCOME = ['outcome'] as const;

// Latency histograms keep the trace id of a traced observation as an exemplar (lib/metrics.ts).
const captureLatency = createLatencyHistogram(
  {
    name: 'viewfinder_async_capture_duration_seconds',
    help: 'Time from the submit of an asynchronous capture to its final outcome (queueing and retries included), by outcome.',
    labelNames: OUTCOME,
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
  },
  apiRegistry,
);

export function recordAsyncCaptureDone(outcome: 'succeeded' | 'failed', submittedAt: Date): void {
  observeTraced(captureLatency, { outcome }, Math.max(0, (Date.now() - submittedAt.getTime()) / 1000));
}

export const WEBHOOK_OUTCOMES = ['delivered', 'failed', 'refused'] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

const webhookDeliveries = new Counter({
  name: 'viewfinder_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome: delivered (2xx), failed (network error, timeout, non-2xx: retried until the last attempt), refused (the network guard refused the target).',
  labelNames: OUTCOME,
  registers: [apiRegistry],
});
for (const outcome of WEBHOOK_OUTCOMES) webhookDeliveries.inc({ outcome }, 0);

const webhookLatency = createLatencyHistogram(
  {
    name: 'viewfinder_webhook_delivery_duration_seconds',
    help: 'Time of one webhook delivery attempt, from resolving the target to its answer, by outcome.',
    labelNames: OUTCOME,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
  apiRegistry,
);

export function recordWebhookDelivery(outcome: WebhookOutcome, seconds: number): void {
  webhookDeliveries.inc({ outcome });
  observeTraced(webhookLatency, { outcome }, seconds);
}
