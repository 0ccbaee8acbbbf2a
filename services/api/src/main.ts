/**
 * The API service: loadConfig → renderer (remote when RENDERER_URL or RENDERER_SERVICE is set, else an in-process
 * Chromium pool) → createApp → listen; on SIGTERM it drains.
 */
import type { Registry } from 'prom-client';
import { loadKubeConfig } from '../../../lib/k8s/kube-config.ts';
import { createLogger, type Logger } from '../../../lib/logger.ts';
import { createRegistry } from '../../../lib/metrics.ts';
import { loadConfigOrExit, runService } from '../../../lib/service-process.ts';
import { checkTracingEnv, startTracing } from '../../../lib/tracing.ts';
import packageJson from '../../../package.json' with { type: 'json' };
import { describeStore, openStore } from '../../../lib/store/open.ts';
import type { BlobStore } from '../../../lib/blobs/blob-store.ts';
import { lazyBlobStore } from '../../../lib/blobs/open.ts';
import { instrumentRenderer } from '../../renderer/src/metrics.ts';
import { createChromiumRenderer } from '../../renderer/src/pool.ts';
import type { Renderer } from '../../renderer/src/renderer.ts';
import { createApp } from './app.ts';
import { cachedReviewer, kubeTokenReviewer } from './auth/operator-token.ts';
import { loadApiConfig, type ApiConfig } from './config.ts';
import { watchRendererEndpointSlices } from './endpoint-slices.ts';
import { instrumentStore } from './metrics.ts';
import { createRemoteRenderer } from './remote-renderer.ts';
import { traceDispatch, traceResultCache } from './trace-spans.ts';
import { reportCacheSize } from './result-cache/metrics.ts';
import { describeResultCache, lazyResultCache } from './result-cache/open.ts';
import { createNetworkGuard } from '../../renderer/src/guard/network-guard.ts';
import { createCaptureJobs, type CaptureJobs } from './captures/service.ts';
import { createJobRunner } from '../../../lib/jobs/runner.ts';
import { openMonitorImages } from './monitors/images.ts';
import { startMonitorService } from './monitors/service.ts';
import { minimumRetrySpanMs } from '../../../lib/jobs/retry.ts';
import type { Store } from '../../../lib/store/store.ts';
import type { ResultCache } from './result-cache/result-cache.ts';
import { selfHostedStorageDelivery } from './storage/configured-destinations.ts';
import { createStorageDelivery, type StorageDelivery } from './storage/delivery.ts';

/**
 * Hosted mode runs its jobs on its store. Self-hosted mode opens the embedded store (or MongoDB)
 * only for them; when it cannot open its own DATA_DIR (read-only), /captures answers 503 and
 * /screenshot works as before. A MongoDB it cannot reach at start stops it instead, as in hosted
 * mode: MONGODB_URI means the replicas share their captures, and a replica that went on without
 * it would answer 503 where the others answer 202 until someone restarted it, where exiting lets
 * Kubernetes restart it until MongoDB answers (the chart starts its MongoDB beside the API).
 */
async function openJobStore(config: ApiConfig, hostedStore: Store | undefined, logger: Logger): Promise<Store | undefined> {
  if (!config.captures.enabled) return undefined;
  if (hostedStore) return hostedStore;
  if (config.store.backend === 'mongo') {
    const store = instrumentStore(await openStore(config.store), 'mongodb');
    logger.info({ store: describeStore(config.store) }, 'Opened the store for asynchronous captures');
    return store;
  }
  try {
    const store = instrumentStore(await openStore(config.store), 'sqlite');
    logger.info({ store: describeStore(config.store) }, 'Opened the store for asynchronous captures');
    return store;
  } catch (err) {
    logger.error({ err, store: describeStore(config.store) }, 'Could not open the store: asynchronous captures (/captures) are unavailable');
    return undefined;
  }
}

function startCaptureJobs(
  config: ApiConfig,
  store: Store | undefined,
  renderer: Renderer,
  resultCache: ResultCache,
  blobs: BlobStore,
  storage: StorageDelivery | undefined,
  logger: Logger,
): CaptureJobs | undefined {
  if (!store) return undefined;
  const captures = createCaptureJobs({ store, renderer, config: config.captures, logger, guard: createNetworkGuard(config.renderer.networkAllowlist), resultCache, blobs, storage });
  captures.runner.start();
  const webhookSpanMs = minimumRetrySpanMs(config.captures.webhook);
  if (webhookSpanMs < 3_600_000) logger.warn({ webhookSpanMs }, 'Webhook retries span less than an hour (WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_BASE_MS, WEBHOOK_RETRY_MAX_MS): a receiver down for longer misses its events');
  logger.info({ workerId: captures.runner.workerId, concurrency: config.captures.concurrency, sharePercent: config.captures.sharePercent }, 'Job runner started');
  return captures;
}

async function createRenderer(config: ApiConfig, logger: Logger): Promise<{ renderer: Renderer; rendererRegistry?: Registry }> {
  const remote = config.remoteRenderer;
  if (remote?.discovery) {
    const { service, namespace, portName } = remote.discovery;
    logger.info({ service, namespace, discovery: 'endpointslices', auth: remote.token ? 'token' : 'none' }, 'Dispatching captures to renderer services');
    const endpoints = await watchRendererEndpointSlices({ kubeConfig: loadKubeConfig(), namespace, service, portName, logger });
    return { renderer: await createRemoteRenderer(remote, logger, endpoints) };
  }
  if (remote) {
    logger.info({ renderers: remote.urls.map((url) => url.origin), auth: remote.token ? 'token' : 'none' }, 'Dispatching captures to renderer services');
    return { renderer: await createRemoteRenderer(remote, logger) };
  }
  // The process metrics are the API registry's; this one holds only the pool's capture metrics.
  const rendererRegistry = createRegistry({ processMetrics: false });
  return { renderer: instrumentRenderer(await createChromiumRenderer(config.renderer, logger), rendererRegistry), rendererRegistry };
}

const config = loadConfigOrExit(() => loadApiConfig(process.env));
loadConfigOrExit(() => checkTracingEnv(process.env));
const logger = createLogger({ level: config.logLevel, name: 'viewfinder-api' });

try {
  // Off unless OTEL_* configures it; then before anything that may start a span.
  if (await startTracing('viewfinder-api', packageJson.version)) logger.info('Tracing: spans go to the OTLP endpoint of OTEL_EXPORTER_OTLP_*');
  const store = config.mode === 'hosted' ? instrumentStore(await openStore(config.store), config.store.backend === 'mongo' ? 'mongodb' : 'sqlite') : undefined;
  if (store) logger.info({ store: describeStore(config.store) }, 'Opened the store');
  if (store && !config.store.secretKeys?.current) {
    logger.warn('SIGNING_SECRETS_KEY is not set: signing secrets and storage destinations\' credentials are stored as they are, and a copy of the store could sign render links and webhooks, or write to the destinations (docs/hosted.md#signing-secrets-at-rest)');
  } else if (store) {
    // Seals what was stored plain or under a previous key: a key rotation ends here (docs/hosted.md#signing-secrets-at-rest).
    const resealed = await store.resealSigningSecrets();
    if (resealed > 0) logger.info({ resealed }, 'Sealed signing secrets with the current SIGNING_SECRETS_KEY');
  }
  const resultCache = traceResultCache(lazyResultCache(config.resultCache));
  reportCacheSize(() => resultCache.sizeBytes());
  logger.info({ resultCache: describeResultCache(config.resultCache), maxBytes: config.resultCache.maxBytes }, 'Results with a cacheTtl are cached (opened on first use)');
  const created = await createRenderer(config, logger);
  const { rendererRegistry } = created;
  const renderer = traceDispatch(created.renderer, config.remoteRenderer ? 'remote' : 'in-process');
  const jobStore = await openJobStore(config, store, logger);
  const blobs = lazyBlobStore(config.blobs);
  logger.info({ blobs: blobs.describe() }, 'Asynchronous results and monitor pictures go to the blob store (opened on first use)');
  // Captures may be written to storage destinations, through their own guard: the accounts' (hosted),
  // or those of STORAGE_DESTINATIONS (self-hosted).
  const storage = store ? createStorageDelivery(store, config.storage) : selfHostedStorageDelivery(config.storage);
  if (!store && storage) logger.info({ destinations: config.storage.destinations.map((entry) => entry.destination.name) }, 'Captures may be written to these storage destinations (STORAGE_DESTINATIONS)');
  if (storage && config.storage.endpointAllowlist.entries.length > 0) logger.info({ allowlist: config.storage.endpointAllowlist.entries }, 'Storage destinations may be at these private addresses (STORAGE_ENDPOINT_ALLOWLIST)');
  const captures = startCaptureJobs(config, jobStore, renderer, resultCache, blobs, storage, logger);
  // One job runner for everything that outlives a request: monitors' runs join the asynchronous
  // captures' runner when there is one (each job type keeps its own concurrency bound).
  const runner = captures?.runner ?? (store ? createJobRunner({ store, logger, concurrency: config.monitors.runConcurrency, leaseMs: 60_000, pollIntervalMs: 1000 }) : undefined);
  const monitors = store && runner ? startMonitorService({ store, renderer, images: await openMonitorImages(config.monitors.images, blobs), runner, config: config.monitors, logger }) : undefined;
  if (runner && runner !== captures?.runner) runner.start();
  const { operatorAuth } = config;
  // Only an API that trusts a ServiceAccount needs the Kubernetes API (KUBECONFIG, or the pod's own account).
  const tokenReviewer =
    config.mode === 'hosted' && operatorAuth.trustedServiceAccounts.length > 0
      ? cachedReviewer(kubeTokenReviewer(loadKubeConfig(), operatorAuth.audience, operatorAuth.reviewTimeoutMs), operatorAuth.reviewCacheMs)
      : undefined;
  if (tokenReviewer) logger.info({ trusted: operatorAuth.trustedServiceAccounts, audience: operatorAuth.audience }, 'The operator routes admit these ServiceAccounts (TokenReview)');
  runService({
    config,
    logger,
    describe: { mode: config.mode, auth: config.mode === 'hosted' ? 'hosted-keys' : config.apiKey ? 'api-key' : 'none', renderer: config.remoteRenderer ? 'remote' : 'in-process' },
    createApp: (isShuttingDown) =>
      createApp({
        config,
        renderer,
        logger,
        store,
        resultCache,
        isShuttingDown,
        ...(rendererRegistry ? { rendererRegistry } : {}),
        ...(captures ? { captures } : {}),
        ...(monitors ? { monitors } : {}),
        ...(tokenReviewer ? { tokenReviewer } : {}),
        ...(storage ? { storage } : {}),
      }),
    close: async () => {
      monitors?.stop();
      // Jobs still running after the grace time go back to the queue, for another replica or the next
      // start, and then run again from the beginning: half of SHUTDOWN_TIMEOUT_MS lets a job finish
      // that a fixed 10 s cut short (a monitor run whose captures clients preempt, seen when a pod
      // was deleted under load), and leaves the other half for the rest of the shutdown.
      await runner?.stop(config.shutdownTimeoutMs / 2);
      await monitors?.images.close();
      await renderer.close();
      if (jobStore !== store) await jobStore?.close();
      await store?.close();
      await resultCache.close();
      await blobs.close();
    },
  });
} catch (err) {
  console.error('viewfinder: failed to start:', err);
  process.exit(1);
}
