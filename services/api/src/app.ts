import Koa from 'koa';
import { Registry } from 'prom-client';
import { NotFound } from '../../../lib/errors.ts';
import { errorTranslator } from '../../../lib/http/error-translator.ts';
import { jsonBody } from '../../../lib/http/json-body.ts';
import { requestContext } from '../../../lib/http/request-context.ts';
import { routerFor, type Route } from '../../../lib/http/routes.ts';
import type { Logger } from '../../../lib/logger.ts';
import { httpMetrics, metricsEndpoint } from '../../../lib/metrics.ts';
import type { Renderer } from '../../renderer/src/renderer.ts';
import { requireSelfHostedKey } from './auth/self-hosted-key.ts';
import type { ApiConfig } from './config.ts';
import { apiRegistry, httpRequestDuration } from './metrics.ts';
import { healthz, readyz } from './routes/health.ts';
import { screenshotHandler } from './routes/screenshot.ts';

export interface AppDeps {
  config: ApiConfig;
  renderer: Renderer;
  logger: Logger;
  /** True once SIGTERM arrived: /readyz turns 503 so that load balancers stop sending traffic. */
  isShuttingDown?: () => boolean;
  /** The capture metrics of an in-process renderer (instrumentRenderer), served beside the API's own. */
  rendererRegistry?: Registry;
}

export function createApp(deps: AppDeps): Koa {
  const { config, renderer, logger } = deps;
  const isShuttingDown = deps.isShuttingDown ?? (() => false);

  const routes: Route[] = [
    { method: 'GET', path: '/healthz', handlers: [healthz] },
    { method: 'GET', path: '/readyz', handlers: [readyz(() => renderer.isReady() && !isShuttingDown())] },
    { method: 'GET', path: '/metrics', handlers: [metricsEndpoint(deps.rendererRegistry ? Registry.merge([apiRegistry, deps.rendererRegistry]) : apiRegistry)] },
  ];
  if (config.mode === 'self-hosted') {
    routes.push({
      method: 'POST',
      path: '/screenshot',
      handlers: [requireSelfHostedKey(config.apiKey), ...jsonBody(config.bodyLimitBytes), screenshotHandler(renderer)],
    });
  }

  const app = new Koa();
  app.use(requestContext(logger));
  app.use(httpMetrics(httpRequestDuration));
  app.use(errorTranslator(logger, config.bodyLimitBytes));
  app.use(routerFor(routes).routes());
  app.use(() => {
    throw new NotFound('Not found: no such route');
  });
  return app;
}
