/**
 * The one place requests are made: the key header, the user agent, a timeout per attempt, the
 * caller's AbortSignal, and retries with backoff on 429 and 503 (honouring Retry-After) and on a
 * connection that failed before any answer, for requests that are safe to send again. A 4xx other
 * than 429 is never retried: it would be answered the same.
 */
import { APIConnectionError, APITimeoutError, errorClassFor, type ViewfinderError } from './errors.ts';
import { VERSION } from './version.ts';

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /** Milliseconds one attempt may take, answer body included (default: the client's `timeout`). */
  timeout?: number;
  /** Cancels the call, waits between retries included; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Retries after a 429, a 503 or a failed connection (default: the client's `maxRetries`). */
  maxRetries?: number;
  /** Sent as Idempotency-Key (asynchronous submits). */
  idempotencyKey?: string;
}

/** What `onRetry` is told before the library waits and sends a request again. */
export interface RetryInfo {
  /** `POST /api/screenshot`. */
  request: string;
  /** 1 for the first retry. */
  attempt: number;
  /** The status that is retried, or undefined after a failed connection. */
  status: number | undefined;
  /** Milliseconds the library waits first. */
  delayMs: number;
}

export interface TransportConfig {
  baseUrl: string;
  apiKey: string | undefined;
  timeout: number;
  maxRetries: number;
  maxRetryDelay: number;
  userAgent: string;
  fetch: typeof fetch;
  onRetry: ((info: RetryInfo) => void) | undefined;
}

export interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  /** The Accept header; application/json by default. */
  accept?: string;
  options?: RequestOptions | undefined;
}

const RETRIED_STATUSES = new Set([429, 503]);
const BASE_DELAY_MS = 500;
const MAX_BACKOFF_MS = 8000;

export function defaultUserAgent(): string {
  const runtime = typeof process !== 'undefined' && process.versions?.node ? `node/${process.versions.node}` : 'js';
  return `viewfinder-typescript/${VERSION} ${runtime}`;
}

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function anySignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  // Node 18: no AbortSignal.any.
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  // Private: util.inspect, JSON.stringify and error reports never show it.
  readonly #apiKey: string | undefined;
  readonly #config: Omit<TransportConfig, 'apiKey'>;

  constructor(config: TransportConfig) {
    const { apiKey, ...rest } = config;
    this.#apiKey = apiKey;
    this.#config = { ...rest, baseUrl: rest.baseUrl.replace(/\/+$/, '') };
  }

  get baseUrl(): string {
    return this.#config.baseUrl;
  }

  /** The URL and fetch options of one attempt, without its signal. */
  buildRequest(call: Call): { url: string; init: RequestInit & { headers: Record<string, string> } } {
    const headers: Record<string, string> = { Accept: call.accept ?? 'application/json', 'User-Agent': this.#config.userAgent };
    if (this.#apiKey !== undefined) headers['X-API-Key'] = this.#apiKey;
    if (call.options?.idempotencyKey !== undefined) headers['Idempotency-Key'] = call.options.idempotencyKey;
    const init: RequestInit & { headers: Record<string, string> } = { method: call.method, headers };
    if (call.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(call.body);
    }
    return { url: `${this.#config.baseUrl}${call.path}`, init };
  }

  /** Sends the call, retrying as the module comment says; resolves with a 2xx answer whose body is read. */
  async send(call: Call): Promise<{ response: Response; body: Uint8Array }> {
    const options = call.options ?? {};
    const maxRetries = options.maxRetries ?? this.#config.maxRetries;
    const timeout = options.timeout ?? this.#config.timeout;
    const label = `${call.method} ${call.path.split('?')[0]}`;
    // A GET or DELETE, or a submit with an idempotency key, may be sent again after a lost connection.
    const idempotent = call.method === 'GET' || call.method === 'DELETE' || options.idempotencyKey !== undefined;
    const { url, init } = this.buildRequest(call);
    for (let attempt = 0; ; attempt++) {
      options.signal?.throwIfAborted();
      const timer = AbortSignal.timeout(timeout);
      const signal = options.signal ? anySignal([options.signal, timer]) : timer;
      let failure: ViewfinderError;
      let status: number | undefined;
      let retryAfter: number | undefined;
      try {
        const response = await this.#config.fetch(url, { ...init, signal });
        const body = new Uint8Array(await response.arrayBuffer());
        if (response.ok) return { response, body };
        status = response.status;
        retryAfter = parseRetryAfter(response.headers.get('Retry-After'));
        failure = new (errorClassFor(status))(errorMessage(status, body), {
          status,
          retryAfter,
          requestId: response.headers.get('X-Request-Id') ?? undefined,
          request: label,
        });
        if (!RETRIED_STATUSES.has(status)) throw failure;
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (timer.aborted) throw new APITimeoutError(`${label} timed out after ${timeout} ms`, { request: label });
        if (status !== undefined) throw err;
        // No answer at all: the connection failed (refused, reset, DNS).
        failure = new APIConnectionError(`${label} failed: ${describe(err)}`, { request: label, cause: err });
        if (!idempotent) throw failure;
      }
      if (attempt >= maxRetries) throw failure;
      const backoff = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
      const delayMs = retryAfter !== undefined ? retryAfter * 1000 : backoff;
      // A wait longer than the bound is the server saying "not soon": the caller decides.
      if (delayMs > this.#config.maxRetryDelay) throw failure;
      this.#config.onRetry?.({ request: label, attempt: attempt + 1, status, delayMs });
      await sleep(delayMs, options.signal);
    }
  }

  async json<T>(call: Call): Promise<T> {
    const { body } = await this.send(call);
    return JSON.parse(new TextDecoder().decode(body)) as T;
  }
}

/** The server's `error` text, or the status and the start of a body that is not the API's JSON. */
function errorMessage(status: number, body: Uint8Array): string {
  const text = new TextDecoder().decode(body);
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && 'error' in parsed && typeof parsed.error === 'string') return parsed.error;
  } catch {
    // Not JSON: a proxy's page, say.
  }
  return `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${err.message}${cause}`;
}
