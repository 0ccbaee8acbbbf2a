/**
 * The API service: loadConfig → renderer (remote when RENDERER_URL or RENDERER_SERVICE is set, else an in-process
 * Chromium pool) → createApp → listen; on SIGTERM it drains.
 */
import type { Registry } from 'prom-client';
import { loadKubeConfig } from '../../../lib/k8s/kube-config.ts';
import { createLogger, type Logger } from '../../../lib/logger.ts';
import { createRegistry } from '../../../lib/metrics.ts';
import { loadConfigOrExit, runService } from '../../../lib/service-process.ts';
import { describeStore, openStore } from '../../../lib/store/open.ts';
import { instrumentRenderer } from '../../renderer/src/metrics.ts';
import { createChromiumRenderer } from '../../renderer/src/pool.ts';
import type { Renderer } from '../../renderer/src/renderer.ts';
import { createApp } from './app.ts';
import { cachedReviewer, kubeTokenReviewer } from './auth/operator-token.ts';
import { loadApiConfig, type ApiConfig } from './config.ts';
import { watchRendererEndpointSlices } from './endpoint-slices.ts';
import { instrumentStore } from './metrics.ts';
import { createRemoteRenderer } from './remote-renderer.ts';
import { reportCacheSize } from './result-cache/metrics.ts';
import { describeResultCache, lazyResultCache } from './result-cache/open.ts';
import { createJobRunner } from '../../../lib/jobs/runner.ts';
import { openMonitorImages } from './monitors/images.ts';
import { startMonitorService } from './monitors/service.ts';

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
const logger = createLogger({ level: config.logLevel, name: 'viewfinder-api' });

try {
  const store = config.mode === 'hosted' ? instrumentStore(await openStore(config.store), config.store.backend === 'mongo' ? 'mongodb' : 'sqlite') : undefined;
  if (store) logger.info({ store: describeStore(config.store) }, 'Opened the store');
  const resultCache = lazyResultCache(config.resultCache);
  reportCacheSize(() => resultCache.sizeBytes());
  logger.info({ resultCache: describeResultCache(config.resultCache), maxBytes: config.resultCache.maxBytes }, 'Results with a cacheTtl are cached (opened on first use)');
  const { renderer, rendererRegistry } = await createRenderer(config, logger);
  // Hosted: the job runner that page monitors' runs are claimed through, and their scheduler.
  const runner = store ? createJobRunner({ store, logger, concurrency: config.monitors.runConcurrency, leaseMs: 60_000, pollIntervalMs: 1000 }) : undefined;
  const monitors = store && runner ? startMonitorService({ store, renderer, images: await openMonitorImages(config.monitors.images), runner, config: config.monitors, logger }) : undefined;
  runner?.start();
  const { operatorAuth } = config;
  // Only an API that trusts a ServiceAccount needs the Kubernetes API (KUBECONFIG, or the pod's own account).
  const tokenReviewer =
    config.mode === 'hosted' && operatorAuth.trustedServiceAccounts.length > 0
      ? cachedReviewer(kubeTokenReviewer(loadKubeConfig(), operatorAuth.audience), operatorAuth.reviewCacheMs)
      : undefined;
  if (tokenReviewer) logger.info({ trusted: operatorAuth.trustedServiceAccounts, audience: operatorAuth.audience }, 'The operator routes admit these ServiceAccounts (TokenReview)');
  runService({
    config,
    logger,
    describe: { mode: config.mode, auth: config.mode === 'hosted' ? 'hosted-keys' : config.apiKey ? 'api-key' : 'none', renderer: config.remoteRenderer ? 'remote' : 'in-process' },
    createApp: (isShuttingDown) =>
      createApp({ config, renderer, logger, store, resultCache, isShuttingDown, ...(monitors ? { monitors } : {}), ...(rendererRegistry ? { rendererRegistry } : {}), ...(tokenReviewer ? { tokenReviewer } : {}) }),
    close: async () => {
      monitors?.stop();
      await runner?.stop();
      await monitors?.images.close();
      await renderer.close();
      await store?.close();
      await resultCache.close();
    },
  });
} catch (err) {
  console.error('viewfinder: failed to start:', err);
  process.exit(1);
}
