/**
 * A Renderer that sends captures to one or more renderer services over HTTP (RENDERER_URL), using
 * the internal API of services/renderer/src/protocol.ts.
 *
 * - Readiness: each renderer's /readyz is probed every probeIntervalMs; captures go round-robin to
 *   the ready ones, and with none ready the answer is 503 at once (the API's /readyz says so too).
 * - A connection-level failure (refused, reset or timed out before any response) is retried once
 *   on another ready renderer, and the failed one is left out until a probe finds it ready again.
 *   A 503 from a renderer that is shutting down is retried the same way: it did no work.
 * - Every other answer is final: the renderer's typed error is rethrown as the same class.
 * - The caller's AbortSignal (the client went away) and the deadline both cancel the upstream
 *   request, which in turn cancels the capture in the renderer.
 */
import http from 'node:http';
import https from 'node:https';
import { CaptureFailed, NavigationTimeout, ServiceUnavailable } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { CAPTURE_PATH, errorFromResponse, resultFromResponse } from '../../renderer/src/protocol.ts';
import type { CaptureOptions, CaptureRequest, CaptureResult, Renderer, RendererStats } from '../../renderer/src/renderer.ts';
import type { RemoteRendererConfig } from './config.ts';
import { recordRendererReadiness, recordRendererRetry } from './metrics.ts';

interface Backend {
  /** Position in RENDERER_URL: what logs and metrics name, never the URL's credentials or path. */
  index: number;
  base: URL;
  ready: boolean;
  stats: RendererStats | undefined;
}

/** A failure before the renderer answered anything: safe to send the capture elsewhere. */
class ConnectionFailure extends Error {
  readonly code: string;
  /** A reset on a kept-alive socket the renderer had just closed: the renderer itself is fine. */
  readonly staleSocket: boolean;
  constructor(code: string, staleSocket: boolean) {
    super(`connection failed: ${code}`);
    this.code = code;
    this.staleSocket = staleSocket;
  }
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'CONNECT_TIMEOUT']);
/** Below the renderer service's keepAliveTimeout (65 s), so that idle sockets are closed by us. */
const IDLE_SOCKET_MS = 4000;
const PROBE_TIMEOUT_MS = 1500;

export interface RemoteRenderer extends Renderer {
  /** Probes every renderer now; resolves when all have answered or timed out. */
  probe(): Promise<void>;
}

export async function createRemoteRenderer(config: RemoteRendererConfig, logger: Logger): Promise<RemoteRenderer> {
  const log = logger.child({ component: 'remote-renderer' });
  const backends: Backend[] = config.urls.map((base, index) => ({ index, base, ready: false, stats: undefined }));
  const agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  };
  const authorization = config.token ? { authorization: `Bearer ${config.token}` } : {};
  let next = 0;
  let closed = false;

  const setReady = (backend: Backend, ready: boolean, why: Record<string, unknown>) => {
    if (backend.ready !== ready) {
      const fields = { renderer: backend.index, origin: backend.base.origin, ...why };
      if (ready) log.info(fields, 'Renderer became ready');
      else log.warn(fields, 'Renderer became unavailable');
    }
    backend.ready = ready;
    if (!ready) backend.stats = undefined;
    recordRendererReadiness(backends.filter((b) => b.ready).length, backends.length);
  };

  const probeOne = async (backend: Backend) => {
    try {
      const response = await fetch(new URL('readyz', backend.base), { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      const body = (await response.json().catch(() => ({}))) as { stats?: RendererStats };
      if (response.ok) backend.stats = body.stats;
      setReady(backend, response.ok, { status: response.status });
    } catch (err) {
      setReady(backend, false, { error: (err as Error).cause ? String((err as { cause: unknown }).cause) : (err as Error).name });
    }
  };
  const probe = async () => {
    await Promise.all(backends.map(probeOne));
  };

  /** The next ready backend in round-robin order, other than `except`. */
  const pick = (except?: Backend): Backend | undefined => {
    for (let i = 0; i < backends.length; i++) {
      const backend = backends[(next + i) % backends.length] as Backend;
      if (backend.ready && backend !== except) {
        next = (backend.index + 1) % backends.length;
        return backend;
      }
    }
    return undefined;
  };

  const send = (backend: Backend, body: string, signal: AbortSignal, requestId: string | undefined) =>
    new Promise<CaptureResult>((resolve, reject) => {
      const url = new URL(CAPTURE_PATH.slice(1), backend.base);
      const transport = url.protocol === 'https:' ? https : http;
      let answered = false;
      const request = transport.request(url, {
        method: 'POST',
        agent: agents[url.protocol as 'http:' | 'https:'],
        signal,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...authorization,
          ...(requestId ? { 'x-request-id': requestId } : {}),
        },
      });
      const connectTimer = setTimeout(() => request.destroy(Object.assign(new Error('connect timeout'), { code: 'CONNECT_TIMEOUT' })), config.connectTimeoutMs);
      request.once('socket', (socket) => {
        if (socket.connecting) socket.once('connect', () => clearTimeout(connectTimer));
        else clearTimeout(connectTimer);
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(connectTimer);
        if (signal.aborted) return reject(signal.reason);
        if (!answered && CONNECTION_ERRORS.has(err.code ?? '')) {
          return reject(new ConnectionFailure(err.code as string, err.code === 'ECONNRESET' && request.reusedSocket));
        }
        log.error({ err, renderer: backend.index, requestId }, 'Renderer request failed');
        reject(new CaptureFailed());
      });
      request.once('response', (response) => {
        answered = true;
        clearTimeout(connectTimer);
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', () => undefined); // the request's 'error' reports it
        response.once('end', () => {
          const payload = Buffer.concat(chunks);
          const status = response.statusCode ?? 0;
          try {
            if (status === 200) return resolve(resultFromResponse(payload, response.headers));
            const typed = errorFromResponse(status, payload, response.headers);
            if (typed) return reject(typed);
            // 401 (a wrong RENDERER_TOKEN) or a protocol mismatch: ours to fix, not the client's.
            log.error({ renderer: backend.index, status, requestId }, 'Renderer refused the capture request; check RENDERER_TOKEN and versions');
            reject(new CaptureFailed());
          } catch (err) {
            reject(err);
          }
        });
      });
      request.end(body);
    });

  const attempt = async (backend: Backend, body: string, signal: AbortSignal, requestId: string | undefined) => {
    try {
      return await send(backend, body, signal, requestId);
    } catch (err) {
      if (err instanceof ConnectionFailure && !err.staleSocket) setReady(backend, false, { error: err.code });
      if (err instanceof ServiceUnavailable) setReady(backend, false, { status: 503 });
      throw err;
    }
  };

  await probe();
  const prober = setInterval(() => void probe(), config.probeIntervalMs);
  prober.unref();

  return {
    probe,

    isReady: () => !closed && backends.some((b) => b.ready),

    stats: () => {
      const total: RendererStats = { capacity: 0, inFlight: 0, queued: 0, browserRestarts: 0, browserCrashes: 0 };
      for (const { stats } of backends) {
        if (!stats) continue;
        for (const key of Object.keys(total) as (keyof RendererStats)[]) total[key] += Number(stats[key]) || 0;
      }
      return total;
    },

    async capture(request: CaptureRequest, options: CaptureOptions = {}): Promise<CaptureResult> {
      const deadline = AbortSignal.timeout(config.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
      const body = JSON.stringify(request);
      const { requestId } = options;
      const first = pick();
      if (!first) throw new ServiceUnavailable('Service unavailable: no renderer is ready', 5);
      try {
        return await attempt(first, body, signal, requestId);
      } catch (err) {
        if (deadline.aborted && !options.signal?.aborted) {
          log.warn({ renderer: first.index, timeoutMs: config.timeoutMs, requestId }, 'Renderer did not answer in time');
          throw new NavigationTimeout('Navigation timeout: the page took too long to load or respond');
        }
        if (!(err instanceof ConnectionFailure) && !(err instanceof ServiceUnavailable)) throw err;
        const second = pick(first) ?? (err instanceof ConnectionFailure && err.staleSocket ? first : undefined);
        const reason = err instanceof ConnectionFailure ? err.code : 'shutting down';
        if (!second) {
          log.warn({ renderer: first.index, reason, requestId }, 'Renderer failed and no other is ready');
          throw new ServiceUnavailable('Service unavailable: no renderer is ready', 5);
        }
        log.warn({ renderer: first.index, retryOn: second.index, reason, requestId }, 'Renderer failed before answering; retrying on another');
        recordRendererRetry();
        try {
          return await attempt(second, body, signal, requestId);
        } catch (retryErr) {
          if (deadline.aborted && !options.signal?.aborted) throw new NavigationTimeout('Navigation timeout: the page took too long to load or respond');
          if (retryErr instanceof ConnectionFailure) throw new ServiceUnavailable('Service unavailable: no renderer could be reached', 5);
          throw retryErr;
        }
      }
    },

    async close(): Promise<void> {
      closed = true;
      clearInterval(prober);
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
