import Koa from 'koa';
import { Registry } from 'prom-client';
import { NotFound } from '../../../lib/errors.ts';
import { errorTranslator } from '../../../lib/http/error-translator.ts';
import { jsonBody } from '../../../lib/http/json-body.ts';
import { requestContext } from '../../../lib/http/request-context.ts';
import { serverTiming } from '../../../lib/http/server-timing.ts';
import { traceRequests } from '../../../lib/http/trace-requests.ts';
import { spanUntilNext } from '../../../lib/tracing.ts';
import { routerFor, type Route } from '../../../lib/http/routes.ts';
import packageJson from '../../../package.json' with { type: 'json' };
import type { Logger } from '../../../lib/logger.ts';
import { httpMetrics, metricsEndpoint } from '../../../lib/metrics.ts';
import type { Renderer } from '../../renderer/src/renderer.ts';
import type { Store } from '../../../lib/store/store.ts';
import { requireHostedKey } from './auth/hosted-key.ts';
import { requireOperator, type TokenReviewer } from './auth/operator-token.ts';
import { requireSelfHostedKey } from './auth/self-hosted-key.ts';
import type { ApiConfig } from './config.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { sessionManager, type Clock } from './dashboard/sessions.ts';
import { apiRegistry, httpRequestDuration, recordDispatchOverhead } from './metrics.ts';
// Page monitors' metrics live in the API's registry (their state gauges are empty until monitors run).
import './monitors/metrics.ts';
import { createRateLimiter, type RateLimiter } from './rate-limit.ts';
import type { MonitorService } from './monitors/service.ts';
import type { ResultCache } from './result-cache/result-cache.ts';
import { hostedRoutes } from './routes/api/index.ts';
import type { HostedDeps } from './routes/api/route.ts';
import { healthz, readyz } from './routes/health.ts';
import { screenshotHandler } from './routes/screenshot.ts';
import type { CaptureJobs } from './captures/service.ts';
import { captureStatusHandler, submitCapturesHandler } from './routes/captures.ts';
import { selfHostedStorageDelivery } from './storage/configured-destinations.ts';
import { createStorageDelivery, type StorageDelivery } from './storage/delivery.ts';

const SERVICE_VERSION = packageJson.version;

export interface AppDeps {
  config: ApiConfig;
  renderer: Renderer;
  logger: Logger;
  /** MODE=hosted: accounts, sites and keys. */
  store?: Store;
  /** MODE=hosted: defaults to counters in the store (shared by replicas) at config.rateLimitPerMinute. */
  limiter?: RateLimiter;
  /** True once SIGTERM arrived: /readyz turns 503 so that load balancers stop sending traffic. */
  isShuttingDown?: () => boolean;
  /** The capture metrics of an in-process renderer (instrumentRenderer), served beside the API's own. */
  rendererRegistry?: Registry;
  /** The dashboard's clock for session expiry; tests move it. */
  clock?: Clock;
  /** Results kept for requests with a cacheTtl (openResultCache); without one they always render. */
  resultCache?: ResultCache;
  /** Asynchronous captures on the job runner (captures/service.ts); without them /captures answers 503. */
  captures?: CaptureJobs;
  /** Hosted: page monitors' scheduler and pictures (monitors/service.ts); without it their routes answer 503. */
  monitors?: MonitorService;
  /** Uploads to storage destinations; by default built from config.storage: on the store (hosted), on STORAGE_DESTINATIONS (self-hosted). */
  storage?: StorageDelivery;
  /** MODE=hosted: reviews the operator's ServiceAccount tokens (kubeTokenReviewer); without one the operator routes answer 403. */
  tokenReviewer?: TokenReviewer;
}

export function createApp(deps: AppDeps): Koa {
  const { config, renderer, logger } = deps;
  const isShuttingDown = deps.isShuttingDown ?? (() => false);

  const routes: Route[] = [
    { method: 'GET', path: '/healthz', handlers: [healthz] },
    // With a renderer tier (RENDERER_URL or EndpointSlices) the API stays ready while no renderer is:
    // captures then answer 503 with Retry-After, instead of the Service losing every endpoint.
    { method: 'GET', path: '/readyz', handlers: [readyz(() => (config.remoteRenderer !== undefined || renderer.isReady()) && !isShuttingDown())] },
    { method: 'GET', path: '/metrics', handlers: [metricsEndpoint(deps.rendererRegistry ? Registry.merge([apiRegistry, deps.rendererRegistry]) : apiRegistry)] },
  ];
  if (config.mode === 'self-hosted') {
    // STORAGE_DESTINATIONS: the destinations `storage` may name, written to as in hosted mode.
    const selfHostedStorage = deps.storage ?? selfHostedStorageDelivery(config.storage);
    const selfHostedKey = spanUntilNext('viewfinder.auth', requireSelfHostedKey(config.apiKey));
    routes.push({
      method: 'POST',
      path: '/screenshot',
      handlers: [selfHostedKey, ...jsonBody(config.bodyLimitBytes), screenshotHandler(renderer, deps.resultCache, logger, selfHostedStorage)],
    });
    routes.push(
      {
        method: 'POST',
        path: '/captures',
        handlers: [selfHostedKey, ...jsonBody(config.bodyLimitBytes), submitCapturesHandler(deps.captures, config.captures.selfHostedSigningSecret, selfHostedStorage)],
      },
      { method: 'GET', path: '/captures/:captureId', handlers: [selfHostedKey, captureStatusHandler(deps.captures)] },
    );
  }
  if (config.mode === 'hosted') {
    const { store } = deps;
    if (!store) throw new Error('MODE=hosted needs a store');
    const limiter = deps.limiter ?? createRateLimiter(config.rateLimitPerMinute, (key, limit, windowSeconds) => store.consumeRateLimit(key, limit, windowSeconds));
    const storage = deps.storage ?? createStorageDelivery(store, config.storage);
    const hosted: HostedDeps = { store, renderer, logger, limiter, resultCache: deps.resultCache, captures: deps.captures, monitors: deps.monitors, storage };
    routes.push(...mountHostedRoutes(hosted, config, deps.tokenReviewer));
    const sessions = sessionManager(store, config.dashboard, deps.clock ?? (() => new Date()));
    routes.push(...dashboardRoutes({ ...hosted, config: config.dashboard, sessions, bodyLimitBytes: config.bodyLimitBytes }));
  }

  const app = new Koa();
  // Only behind a proxy that sets them may X-Forwarded-Proto (Secure cookies) and -For (client address) be believed.
  app.proxy = config.dashboard.trustProxy;
  // First: the access log line and all the request does are written in its span (lib/tracing.ts).
  app.use(traceRequests({ 'viewfinder.mode': config.mode }));
  app.use(serverTiming(recordDispatchOverhead));
  app.use(requestContext(logger));
  app.use(httpMetrics(httpRequestDuration));
  app.use(errorTranslator(logger, config.bodyLimitBytes));
  app.use(routerFor(routes).routes());
  app.use(() => {
    throw new NotFound('Not found: no such route');
  });
  return app;
}

/** Hosted routes describe their auth and body; the key is checked before the body is read. */
function mountHostedRoutes(deps: HostedDeps, config: ApiConfig, tokenReviewer: TokenReviewer | undefined): Route[] {
  const operatorAuth = requireOperator(tokenReviewer, config.operatorAuth, deps.logger);
  return hostedRoutes(SERVICE_VERSION).map((route) => ({
    method: route.method,
    path: route.path,
    handlers: [
      ...(route.access === 'public' ? [] : [spanUntilNext('viewfinder.auth', route.access === 'operator' ? operatorAuth : requireHostedKey(deps.store, deps.logger, route.access), { 'viewfinder.access': route.access })]),
      ...(route.body ? jsonBody(config.bodyLimitBytes) : []),
      route.handler(deps),
    ],
  }));
}
