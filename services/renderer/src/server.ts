/**
 * The renderer service's HTTP API (see protocol.ts): a thin layer over the Renderer interface, with
 * its own probes and metrics. It shares the API's middleware: request ids and access logs, the one
 * error translator, JSON bodies, 405s and HTTP metrics.
 */
import Koa, { type Middleware } from 'koa';
import type { Registry } from 'prom-client';
import { NotFound, ServiceUnavailable, Unauthorized } from '../../../lib/errors.ts';
import { secretMatches } from '../../../lib/constant-time.ts';
import { abortWhenClientGoes } from '../../../lib/http/client-gone.ts';
import { errorTranslator } from '../../../lib/http/error-translator.ts';
import { jsonBody } from '../../../lib/http/json-body.ts';
import { requestContext } from '../../../lib/http/request-context.ts';
import { traceRequests } from '../../../lib/http/trace-requests.ts';
import { routerFor } from '../../../lib/http/routes.ts';
import type { Logger } from '../../../lib/logger.ts';
import { createHttpRequestDuration, httpMetrics, metricsEndpoint } from '../../../lib/metrics.ts';
import { MIME_TYPES } from './capture/image-formats.ts';
import { CAPTURE_PATH, DRAINING_HEADER, loadHeaders, loadOf, parseCaptureRequest, resultAnswer, STATUS_PATH, type RendererStatus } from './protocol.ts';
import type { Renderer } from './renderer.ts';

export interface RendererServerDeps {
  /** Usually instrumentRenderer(pool, registry), so that captures show in `registry`. */
  renderer: Renderer;
  /** Served at GET /metrics; the HTTP request histogram is registered in it too. */
  registry: Registry;
  logger: Logger;
  /** RENDERER_TOKEN: when set, captures need `Authorization: Bearer <token>`. */
  token: string | undefined;
  bodyLimitBytes: number;
  isShuttingDown?: () => boolean;
}

export function createRendererServer(deps: RendererServerDeps): Koa {
  const { renderer, registry, logger } = deps;
  const isShuttingDown = deps.isShuttingDown ?? (() => false);
  const isReady = () => renderer.isReady() && !isShuttingDown();

  const router = routerFor([
    { method: 'GET', path: '/healthz', handlers: [(ctx) => void (ctx.body = { status: 'ok' })] },
    { method: 'GET', path: '/readyz', handlers: [readyz(renderer, isReady)] },
    { method: 'GET', path: '/metrics', handlers: [metricsEndpoint(registry)] },
    { method: 'GET', path: STATUS_PATH, handlers: [status(renderer, isReady, isShuttingDown)] },
    {
      method: 'POST',
      path: CAPTURE_PATH,
      handlers: [reportLoad(renderer), requireToken(deps.token), ...jsonBody(deps.bodyLimitBytes), captureHandler(renderer, isShuttingDown)],
    },
  ]);

  const app = new Koa();
  // A capture's spans continue the API's trace (its traceparent header; lib/tracing.ts).
  app.use(traceRequests({}, [STATUS_PATH]));
  // The API polls GET /v1/status every probeIntervalMs (2 s) from every API pod.
  app.use(requestContext(logger, [STATUS_PATH]));
  app.use(httpMetrics(createHttpRequestDuration(registry)));
  app.use(errorTranslator(logger, deps.bodyLimitBytes));
  app.use(router.routes());
  app.use(() => {
    throw new NotFound('Not found: no such route');
  });
  return app;
}

/** Ready: 200 with the pool's stats, which the API sums for its own view of capacity. */
function readyz(renderer: Renderer, isReady: () => boolean): Middleware {
  return (ctx) => {
    if (!isReady()) throw new ServiceUnavailable('Not ready: the browser pool is starting or the service is shutting down');
    ctx.body = { status: 'ready', stats: renderer.stats() };
  };
}

/** The load, cheap enough to ask for every second: the API's balancer reads it between captures. */
function status(renderer: Renderer, isReady: () => boolean, isShuttingDown: () => boolean): Middleware {
  return (ctx) => {
    const load = loadOf(renderer.stats());
    const body: RendererStatus = { ready: isReady(), draining: isShuttingDown(), freeSlots: Math.max(0, load.capacity - load.inFlight), ...load };
    ctx.body = body;
  };
}

/**
 * Every capture answer, success or error, says how busy the renderer is once this capture is done,
 * so that the API balances on fresh figures without asking.
 */
function reportLoad(renderer: Renderer): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      ctx.set(loadHeaders(loadOf(renderer.stats())));
    }
  };
}

function requireToken(token: string | undefined): Middleware {
  if (token === undefined) return (_ctx, next) => next();
  return async (ctx, next) => {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'))?.[1];
    if (presented === undefined || !secretMatches(presented, token)) {
      throw new Unauthorized(presented === undefined ? 'Invalid renderer token: none was given' : 'Invalid renderer token');
    }
    await next();
  };
}

function captureHandler(renderer: Renderer, isShuttingDown: () => boolean): Middleware {
  return async (ctx) => {
    // A request that arrives on a kept-alive connection after SIGTERM: the API retries it elsewhere.
    if (isShuttingDown()) {
      ctx.set(DRAINING_HEADER, 'true');
      throw new ServiceUnavailable('Renderer is shutting down', 1);
    }
    const request = parseCaptureRequest(ctx.request.body);
    const clientGone = abortWhenClientGoes(ctx);
    try {
      const result = await renderer.capture(request, { signal: clientGone.signal, requestId: ctx.state.requestId });
      const { headers, body } = resultAnswer(result);
      ctx.set(headers);
      ctx.type = MIME_TYPES[result.format];
      ctx.body = body;
    } finally {
      clientGone.dispose();
    }
  };
}
