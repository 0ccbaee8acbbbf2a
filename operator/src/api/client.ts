import {
  managedDestinationPath,
  managedPath,
  type ManagedDestination,
  type PutManagedDestination,
  type IssuedManagedKey,
  type ManagedMonitor,
  type PutManagedMonitor,
  type ManagedSite,
  type ManagedKey,
  type PutManagedKey,
  type PutManagedKeyAnswer,
  type PutManagedSite,
} from '../../../lib/operator-api.ts';
import type { TokenSource } from './token.ts';

/**
 * The operator's client for the hosted API's operator routes (lib/operator-api.ts). The API owns
 * the store; the operator only ever calls this. Every call carries the ServiceAccount token.
 *
 * Failures are typed: ApiUnavailable (no answer, a timeout or a 5xx: worth retrying) and ApiRefused
 * (any other error answer, with the API's status and message). /readyz asks checkAvailable.
 */
export class ApiUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApiUnavailable';
  }
}

export class ApiRefused extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiRefused';
    this.status = status;
  }
}

export interface ApiClientOptions {
  baseUrl: URL;
  tokens: TokenSource;
  timeoutMs: number;
}

export class ApiClient {
  private readonly options: ApiClientOptions;

  constructor(options: ApiClientOptions) {
    this.options = options;
  }

  async getAccount(accountId: string): Promise<{ id: string; name: string } | null> {
    return this.orNull(() => this.call('GET', `/api/operator/accounts/${encodeURIComponent(accountId)}`));
  }

  async getSite(namespace: string, name: string): Promise<ManagedSite | null> {
    return this.orNull(() => this.call('GET', managedPath('Site', namespace, name)));
  }

  async putSite(namespace: string, name: string, input: PutManagedSite): Promise<ManagedSite> {
    return this.call('PUT', managedPath('Site', namespace, name), input);
  }

  /** The id of the deleted site, or null when there was none. */
  async deleteSite(namespace: string, name: string): Promise<string | null> {
    return (await this.call<{ deleted: string | null }>('DELETE', managedPath('Site', namespace, name))).deleted;
  }

  /** The storage destination a Site's spec.storage declares (issue #43). */
  async getDestination(namespace: string, siteName: string): Promise<ManagedDestination | null> {
    return this.orNull(() => this.call('GET', managedDestinationPath(namespace, siteName)));
  }

  async putDestination(namespace: string, siteName: string, input: PutManagedDestination): Promise<ManagedDestination> {
    return this.call('PUT', managedDestinationPath(namespace, siteName), input);
  }

  /** The name of the deleted destination, or null when there was none. */
  async deleteDestination(namespace: string, siteName: string): Promise<string | null> {
    return (await this.call<{ deleted: string | null }>('DELETE', managedDestinationPath(namespace, siteName))).deleted;
  }

  async getKey(namespace: string, name: string): Promise<ManagedKey | null> {
    return this.orNull(() => this.call('GET', managedPath('ApiKey', namespace, name)));
  }

  async putKey(namespace: string, name: string, input: PutManagedKey): Promise<PutManagedKeyAnswer> {
    return this.call('PUT', managedPath('ApiKey', namespace, name), input);
  }

  /** Null when the key vanished meanwhile. */
  async regenerateKey(namespace: string, name: string): Promise<IssuedManagedKey | null> {
    return this.orNull(() => this.call('POST', `${managedPath('ApiKey', namespace, name)}/regenerate`));
  }

  /** Whether the key's current hash is `keyHash`; false when there is no such key. */
  async keyMatches(namespace: string, name: string, keyHash: string): Promise<boolean> {
    const answer = await this.orNull(() => this.call<{ matches: boolean }>('POST', `${managedPath('ApiKey', namespace, name)}/verify`, { keyHash }));
    return answer?.matches ?? false;
  }

  async deleteKey(namespace: string, name: string): Promise<string | null> {
    return (await this.call<{ deleted: string | null }>('DELETE', managedPath('ApiKey', namespace, name))).deleted;
  }

  async getMonitor(namespace: string, name: string): Promise<ManagedMonitor | null> {
    return this.orNull(() => this.call('GET', managedPath('PageMonitor', namespace, name)));
  }

  async putMonitor(namespace: string, name: string, input: PutManagedMonitor): Promise<ManagedMonitor> {
    return this.call('PUT', managedPath('PageMonitor', namespace, name), input);
  }

  async deleteMonitor(namespace: string, name: string): Promise<string | null> {
    return (await this.call<{ deleted: string | null }>('DELETE', managedPath('PageMonitor', namespace, name))).deleted;
  }

  /**
   * For /readyz: asks the API's /healthz on every probe. A follower, or a leader with nothing to
   * reconcile, makes no other call, so what the last call saw says nothing about the API now.
   */
  async checkAvailable(): Promise<string | undefined> {
    const { baseUrl, timeoutMs } = this.options;
    try {
      const response = await fetch(new URL('healthz', baseUrl), { signal: AbortSignal.timeout(Math.min(timeoutMs, 2000)) });
      await response.body?.cancel();
      return response.status >= 500 ? `The API's /healthz answered ${response.status}` : undefined;
    } catch (err) {
      return `The API at ${baseUrl.origin} cannot be reached: ${describeFetchError(err)}`;
    }
  }

  private async orNull<T>(call: () => Promise<T>): Promise<T | null> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ApiRefused && err.status === 404) return null;
      throw err;
    }
  }

  private async call<T>(method: string, path: string, body?: object, retried = false): Promise<T> {
    const { baseUrl, tokens, timeoutMs } = this.options;
    const token = await tokens.token();
    let response: Response;
    let text: string;
    try {
      response = await fetch(new URL(path.replace(/^\//, ''), baseUrl), {
        method,
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      throw new ApiUnavailable(`The API at ${baseUrl.origin} cannot be reached: ${describeFetchError(err)}`);
    }
    if (response.status >= 500) throw new ApiUnavailable(`The API answered ${response.status}: ${errorText(text)}`);
    if (response.status === 401 && !retried) {
      // An expired or rotated token: ask for a fresh one, once.
      tokens.invalidate();
      return this.call(method, path, body, true);
    }
    if (response.status >= 400) throw new ApiRefused(response.status, errorText(text));
    return JSON.parse(text) as T;
  }
}

/** The error message of the API's JSON error shape, or the start of whatever came back. */
function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON
  }
  return text.slice(0, 200) || '(empty body)';
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return 'no answer in time';
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
