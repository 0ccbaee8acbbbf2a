/**
 * The API's metrics, in one dedicated registry served at GET /metrics. The recorders are plain
 * functions so that any module (auth, rate limiting, the store) records without plumbing.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { createHttpRequestDuration, createRegistry } from '../../../lib/metrics.ts';

export const apiRegistry = createRegistry();

export const httpRequestDuration = createHttpRequestDuration(apiRegistry);

/** Why a request failed to authenticate. A bounded set: never the key, the site or the URL. */
export const AUTH_FAILURE_REASONS = ['missing_key', 'invalid_key', 'site_required', 'site_forbidden', 'domain_forbidden', 'invalid_token', 'untrusted_service_account'] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

const authFailures = new Counter({
  name: 'viewfinder_auth_failures_total',
  help: 'Requests refused by authentication or authorization, by reason.',
  labelNames: ['reason'] as const,
  registers: [apiRegistry],
});
// Every reason exists from the start, so that rate() sees the first failure.
for (const reason of AUTH_FAILURE_REASONS) authFailures.inc({ reason }, 0);

export function recordAuthFailure(reason: AuthFailureReason): void {
  authFailures.inc({ reason });
}

const rateLimited = new Counter({
  name: 'viewfinder_rate_limited_total',
  help: 'Requests refused with 429 by the rate limiter.',
  registers: [apiRegistry],
});

export function recordRateLimited(): void {
  rateLimited.inc();
}

const STORE_LABELS = ['operation', 'backend'] as const;
export type StoreBackend = 'mongodb' | 'sqlite';

const storeOperationDuration = new Histogram({
  name: 'viewfinder_store_operation_duration_seconds',
  help: 'Time taken by a store operation, by operation name (a fixed name from the code) and backend.',
  labelNames: STORE_LABELS,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [apiRegistry],
});

/** Times `operation` (e.g. 'findKeyByHash') against `backend`, whether it resolves or throws. */
export async function timeStoreOperation<T>(operation: string, backend: StoreBackend, run: () => Promise<T>): Promise<T> {
  const stopTimer = storeOperationDuration.startTimer({ operation, backend });
  try {
    return await run();
  } finally {
    stopTimer();
  }
}

/**
 * The store with every method timed as `operation` = the method's name (a fixed set, from the code).
 * Every method of a store returns a promise; `close` is left alone.
 */
export function instrumentStore<T extends object>(store: T, backend: StoreBackend): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'close') return value;
      return (...args: unknown[]) => timeStoreOperation(property, backend, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}

const renderersConfigured = new Gauge({
  name: 'viewfinder_renderers_configured',
  help: 'Renderer services listed in RENDERER_URL or found through EndpointSlices (0 when the renderer runs in-process).',
  registers: [apiRegistry],
});

const renderersReady = new Gauge({
  name: 'viewfinder_renderers_ready',
  help: 'Renderer services whose /v1/status said ready at the last probe.',
  registers: [apiRegistry],
});

export function recordRendererReadiness(ready: number, configured: number): void {
  renderersReady.set(ready);
  renderersConfigured.set(configured);
}

const rendererRetries = new Counter({
  name: 'viewfinder_renderer_retries_total',
  help: 'Captures sent again to another renderer after a refusal (draining, full) or a connection-level failure.',
  registers: [apiRegistry],
});

export function recordRendererRetry(): void {
  rendererRetries.inc();
}

const dispatchOverhead = new Histogram({
  name: 'viewfinder_api_dispatch_overhead_seconds',
  help: 'Time a request that went to a renderer spent in the API itself: the whole request minus the time waiting on renderers (authentication, validation, balancing, encoding the answer).',
  buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
  registers: [apiRegistry],
});

export function recordDispatchOverhead(seconds: number): void {
  dispatchOverhead.observe(seconds);
}
