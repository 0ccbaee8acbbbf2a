/**
 * A Renderer that sends captures to renderer services over HTTP, using the internal API of
 * services/renderer/src/protocol.ts. Which renderers exist comes from RendererEndpoints: a fixed
 * RENDERER_URL list, or the renderer Service's EndpointSlices in Kubernetes.
 *
 * - Balancing, per capture: the least-loaded ready renderer (balancer.ts). Each renderer reports
 *   its load on every capture answer, and its GET /v1/status is polled every probeIntervalMs
 *   (which is also the readiness check); a renderer is eligible once it has reported.
 * - Retry, once and on another renderer, for a capture that did no work there: a connection-level
 *   failure (refused, reset, timed out before any answer, including a SIGKILLed renderer), a 503
 *   (draining or not ready) and a 429 (its queue is full: the tier is full only when the other is
 *   too). The failed renderer is left out until a probe finds it ready again. A refused connection
 *   did no work anywhere and does not use up the retry (sendSkippingRefused).
 * - Every other answer is final: the renderer's typed error is rethrown as the same class.
 * - The caller's AbortSignal (the client went away) and the deadline both cancel the upstream
 *   request, which in turn cancels the capture in the renderer.
 */
import http from 'node:http';
import https from 'node:https';
import { CaptureFailed, NavigationTimeout, ServiceUnavailable, TooManyRequests } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import {
  CAPTURE_PATH,
  errorFromResponse,
  loadFromHeaders,
  resultFromResponse,
  STATUS_PATH,
  type RendererLoad,
  type RendererStatus,
} from '../../renderer/src/protocol.ts';
import type { CaptureOptions, CaptureRequest, CaptureResult, Renderer, RendererStats } from '../../renderer/src/renderer.ts';
import { captureEnded, captureStarted, estimatedBusy, leastLoaded, newBalancedBackend, recordLoad, type BalancedBackend } from './balancer.ts';
import type { RemoteRendererConfig } from './config.ts';
import { recordRendererReadiness, recordRendererRetry } from './metrics.ts';
import { staticEndpoints, type RendererEndpoints } from './renderer-endpoints.ts';
import { tracedExchange } from './trace-spans.ts';
import { traceHeaders } from '../../../lib/tracing.ts';

interface Backend extends BalancedBackend {
  /** What logs name: scheme, host and port, never a path or credentials. */
  origin: string;
  base: URL;
  /** False once discovery no longer lists it: it gets no capture and no probe. */
  listed: boolean;
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

export interface RemoteRenderer extends Renderer {
  /** Probes every renderer now; resolves when all have answered or timed out. */
  probe(): Promise<void>;
}


export async function createRemoteRenderer(config: RemoteRendererConfig, logger: Logger, endpoints: RendererEndpoints = staticEndpoints(config.urls)): Promise<RemoteRenderer> {
  const log = logger.child({ component: 'remote-renderer' });
  const backends = new Map<string, Backend>();
  /** The listed backends as an array, rebuilt on change: the balancer scans it for every capture. */
  let listed: Backend[] = [];
  const agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  };
  const authorization = config.token ? { authorization: `Bearer ${config.token}` } : {};
  let closed = false;

  const recordReadiness = () => recordRendererReadiness(listed.filter((b) => b.ready).length, listed.length);

  const setReady = (backend: Backend, ready: boolean, why: Record<string, unknown>) => {
    if (backend.ready !== ready && backend.listed) {
      const fields = { renderer: backend.origin, ...why };
      if (ready) log.info(fields, 'Renderer became ready');
      else log.warn(fields, 'Renderer became unavailable');
    }
    backend.ready = ready && backend.listed;
    recordReadiness();
  };

  const probeOne = async (backend: Backend) => {
    try {
      const response = await fetch(new URL(STATUS_PATH.slice(1), backend.base), { signal: AbortSignal.timeout(config.probeTimeoutMs) });
      const status = (await response.json().catch(() => ({}))) as Partial<RendererStatus>;
      const ready = response.ok && status.ready === true && typeof status.capacity === 'number' && status.capacity >= 1;
      if (ready) recordLoad(backend, { capacity: status.capacity as number, inFlight: Number(status.inFlight) || 0, queued: Number(status.queued) || 0 });
      setReady(backend, ready, { status: response.status, ...(status.draining ? { draining: true } : {}) });
    } catch (err) {
      setReady(backend, false, { error: (err as Error).cause ? String((err as { cause: unknown }).cause) : (err as Error).name });
    }
  };
  const probe = async () => {
    await Promise.all(listed.map(probeOne));
  };

  /** Brings the backends in line with discovery: new ones are probed at once, gone ones stop getting captures. */
  const syncEndpoints = () => {
    const current = new Set<string>();
    for (const base of endpoints.current()) {
      current.add(base.href);
      if (!backends.has(base.href)) {
        const backend: Backend = { ...newBalancedBackend(), origin: base.origin, base, listed: true };
        backends.set(base.href, backend);
        if (!closed) void probeOne(backend);
      }
    }
    for (const [href, backend] of backends) {
      if (current.has(href)) continue;
      // Captures in flight there finish on their own sockets; nothing new goes to it.
      backend.listed = false;
      backend.ready = false;
      backends.delete(href);
      log.info({ renderer: backend.origin }, 'Renderer left discovery');
    }
    listed = [...backends.values()];
    recordReadiness();
  };

  const send = (backend: Backend, body: string, signal: AbortSignal, options: CaptureOptions) =>
    new Promise<CaptureResult>((resolve, reject) => {
      const { requestId, timing } = options;
      const url = new URL(CAPTURE_PATH.slice(1), backend.base);
      const transport = url.protocol === 'https:' ? https : http;
      let answered = false;
      let load: RendererLoad | undefined;
      captureStarted(backend);
      const sentAt = performance.now();
      const settle = () => {
        captureEnded(backend, load);
        if (timing) {
          timing.upstreamMs += performance.now() - sentAt;
          timing.exchanges += 1;
        }
      };
      const request = transport.request(url, {
        method: 'POST',
        agent: agents[url.protocol as 'http:' | 'https:'],
        signal,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...authorization,
          ...(requestId ? { 'x-request-id': requestId } : {}),
          // The W3C traceparent of this exchange's span, so that the renderer's spans join the trace.
          ...traceHeaders(),
        },
      });
      const connectTimer = setTimeout(() => request.destroy(Object.assign(new Error('connect timeout'), { code: 'CONNECT_TIMEOUT' })), config.connectTimeoutMs);
      request.once('socket', (socket) => {
        if (socket.connecting) socket.once('connect', () => clearTimeout(connectTimer));
        else clearTimeout(connectTimer);
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(connectTimer);
        settle();
        if (signal.aborted) return reject(signal.reason);
        if (!answered && CONNECTION_ERRORS.has(err.code ?? '')) {
          return reject(new ConnectionFailure(err.code as string, err.code === 'ECONNRESET' && request.reusedSocket));
        }
        log.error({ err, renderer: backend.origin, requestId }, 'Renderer request failed');
        reject(new CaptureFailed());
      });
      request.once('response', (response) => {
        answered = true;
        clearTimeout(connectTimer);
        load = loadFromHeaders(response.headers);
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', () => undefined); // the request's 'error' reports it
        response.once('end', () => {
          settle();
          const payload = Buffer.concat(chunks);
          const status = response.statusCode ?? 0;
          try {
            if (status === 200) return resolve(resultFromResponse(payload, response.headers));
            const typed = errorFromResponse(status, payload, response.headers);
            if (typed) return reject(typed);
            // 401 (a wrong RENDERER_TOKEN) or a protocol mismatch: ours to fix, not the client's.
            log.error({ renderer: backend.origin, status, requestId }, 'Renderer refused the capture request; check RENDERER_TOKEN and versions');
            reject(new CaptureFailed());
          } catch (err) {
            reject(err);
          }
        });
      });
      request.end(body);
    });

  const attempt = async (backend: Backend, body: string, signal: AbortSignal, options: CaptureOptions) => {
    try {
      return await tracedExchange(backend.base, () => send(backend, body, signal, options));
    } catch (err) {
      if (err instanceof ConnectionFailure && !err.staleSocket) setReady(backend, false, { error: err.code });
      if (err instanceof ServiceUnavailable) setReady(backend, false, { status: 503 });
      throw err;
    }
  };

  /**
   * Sends to `backend`; when its connection is refused (a renderer that is gone and not yet known
   * to be), moves on to the next least-loaded one. A refused connection did nothing anywhere, so it
   * does not use up the one retry; each refused renderer is marked unready, so this ends.
   * `tried.last` is the renderer that gave the final answer.
   */
  const sendSkippingRefused = async (backend: Backend, except: Backend | undefined, tried: { last: Backend }, body: string, signal: AbortSignal, options: CaptureOptions) => {
    const { requestId } = options;
    for (let current = backend; ; ) {
      tried.last = current;
      try {
        return await attempt(current, body, signal, options);
      } catch (err) {
        const refused = err instanceof ConnectionFailure && err.code === 'ECONNREFUSED' && !signal.aborted;
        const next = refused ? leastLoaded(listed, except) : undefined;
        if (!next) throw err;
        log.info({ renderer: current.origin, retryOn: next.origin, reason: 'ECONNREFUSED', requestId }, 'Renderer refused the connection; trying another');
        recordRendererRetry();
        current = next;
      }
    }
  };

  /** Refusals that did no work on the renderer: the capture may go to another one. */
  const retryable = (err: unknown) => err instanceof ConnectionFailure || err instanceof ServiceUnavailable || err instanceof TooManyRequests;
  const reasonOf = (err: unknown) => (err instanceof ConnectionFailure ? err.code : err instanceof TooManyRequests ? 'full' : 'unavailable');

  syncEndpoints();
  endpoints.onChange(syncEndpoints);
  await probe();
  const prober = setInterval(() => void probe(), config.probeIntervalMs);
  prober.unref();

  return {
    probe,

    isReady: () => !closed && listed.some((b) => b.ready),

    // The load as this process believes it now (estimatedBusy): the renderers' last reports, plus
    // what it sent since and what it still waits for. A report alone lags: the one a capture's answer
    // carries says the tier is idle although this process sends the next capture a moment later.
    stats: () => {
      const total: RendererStats = { capacity: 0, inFlight: 0, queued: 0, browserRestarts: 0, browserCrashes: 0 };
      for (const backend of listed) {
        const { load, ready } = backend;
        if (!load || !ready) continue;
        const busy = estimatedBusy(backend);
        total.capacity += load.capacity;
        total.inFlight += Math.min(busy, load.capacity);
        total.queued += Math.max(0, busy - load.capacity);
      }
      return total;
    },

    async capture(request: CaptureRequest, options: CaptureOptions = {}): Promise<CaptureResult> {
      const deadline = AbortSignal.timeout(config.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
      const body = JSON.stringify(request);
      const { requestId } = options;
      const timedOut = () => deadline.aborted && !options.signal?.aborted;
      const chosen = leastLoaded(listed);
      if (!chosen) throw new ServiceUnavailable('Service unavailable: no renderer is ready', 5);
      const tried = { last: chosen };
      try {
        return await sendSkippingRefused(chosen, undefined, tried, body, signal, options);
      } catch (err) {
        const first = tried.last;
        if (timedOut()) {
          log.warn({ renderer: first.origin, timeoutMs: config.timeoutMs, requestId }, 'Renderer did not answer in time');
          throw new NavigationTimeout('Navigation timeout: the page took too long to load or respond');
        }
        if (!retryable(err)) throw err;
        const second = leastLoaded(listed, first) ?? (err instanceof ConnectionFailure && err.staleSocket ? first : undefined);
        if (!second) {
          log.warn({ renderer: first.origin, reason: reasonOf(err), requestId }, 'Renderer refused the capture and no other is ready');
          if (err instanceof TooManyRequests) throw err;
          throw new ServiceUnavailable('Service unavailable: no renderer is ready', 5);
        }
        log.info({ renderer: first.origin, retryOn: second.origin, reason: reasonOf(err), requestId }, 'Renderer refused the capture before starting it; retrying on another');
        recordRendererRetry();
        try {
          return await sendSkippingRefused(second, first, { last: second }, body, signal, options);
        } catch (retryErr) {
          if (timedOut()) throw new NavigationTimeout('Navigation timeout: the page took too long to load or respond');
          if (retryErr instanceof ConnectionFailure) throw new ServiceUnavailable('Service unavailable: no renderer could be reached', 5);
          throw retryErr;
        }
      }
    },

    async close(): Promise<void> {
      closed = true;
      clearInterval(prober);
      endpoints.close();
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
