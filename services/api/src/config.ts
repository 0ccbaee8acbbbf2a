import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, readEnum, readInt, readList, readOptionalString, readString, type Env } from '../../../lib/env.ts';
import { DEFAULT_OPERATOR_AUDIENCE } from '../../../lib/operator-api.ts';
import { loadHttpServiceConfig, type HttpServiceConfig } from '../../../lib/service-process.ts';
import { loadStoreConfig, type StoreConfig } from '../../../lib/store/open.ts';
import { loadBlobStoreConfig, type BlobStoreConfig } from '../../../lib/blobs/open.ts';
import { loadRendererConfig, type RendererConfig } from '../../renderer/src/config.ts';
import { loadDashboardConfig, type DashboardConfig } from './dashboard/config.ts';
import { loadCapturesConfig, type CapturesConfig } from './captures/config.ts';
import { loadMonitorsConfig, type MonitorsConfig } from './monitors/config.ts';
import { loadStorageConfig, type StorageConfig } from './storage/config.ts';

export const MODES = ['self-hosted', 'hosted'] as const;
export type Mode = (typeof MODES)[number];

export interface ApiConfig extends HttpServiceConfig {
  mode: Mode;
  /** Self-hosted only: when set, every capture must carry this key. */
  apiKey: string | undefined;
  renderer: RendererConfig;
  /** Hosted only: where accounts, sites and keys live (MONGODB_URI, else DATA_DIR). */
  store: StoreConfig;
  /** Hosted only: captures per minute per key, unless the account sets its own limit. */
  rateLimitPerMinute: number;
  /** Set when RENDERER_URL or RENDERER_SERVICE is: captures go to renderer services over HTTP instead of an in-process pool. */
  remoteRenderer: RemoteRendererConfig | undefined;
  /** Hosted only: sessions, sign-in limits, single sign-on and TRUST_PROXY (dashboard/config.ts). */
  dashboard: DashboardConfig;
  /** Where results with a cacheTtl are kept: beside the store, in either mode. */
  resultCache: ResultCacheConfig;
  /** BLOB_STORE: where the service's own blobs go (asynchronous results, monitor pictures; lib/blobs/open.ts). */
  blobs: BlobStoreConfig;
  /** Asynchronous captures, the job runner and webhooks (captures/config.ts). */
  captures: CapturesConfig;
  /** Hosted only: page monitors' schedules, slot share and pictures (monitors/config.ts). */
  monitors: MonitorsConfig;
  /** Hosted only: captures delivered to the client's bucket, its guard and bounds (storage/config.ts). */
  storage: StorageConfig;
  /** Hosted only: who may call the operator routes (/api/operator), by Kubernetes ServiceAccount token. */
  operatorAuth: OperatorAuthConfig;
}

export interface OperatorAuthConfig {
  /** OPERATOR_SERVICE_ACCOUNTS: `namespace/name` of each trusted ServiceAccount; empty trusts none. */
  trustedServiceAccounts: string[];
  /** OPERATOR_TOKEN_AUDIENCE: the audience the tokens must carry (TokenReview spec.audiences). */
  audience: string;
  /** TOKEN_REVIEW_CACHE_SECONDS: how long a review's answer is reused for the same token. */
  reviewCacheMs: number;
  /** TOKEN_REVIEW_TIMEOUT_MS: one TokenReview's deadline; past it the operator routes answer 503 (fail closed). */
  reviewTimeoutMs: number;
}

const SERVICE_ACCOUNT_REF = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/;

function loadOperatorAuthConfig(env: Env): OperatorAuthConfig {
  const trustedServiceAccounts = readList(env, 'OPERATOR_SERVICE_ACCOUNTS');
  for (const entry of trustedServiceAccounts) {
    if (!SERVICE_ACCOUNT_REF.test(entry)) throw new ConfigError(`OPERATOR_SERVICE_ACCOUNTS: "${entry}" is not namespace/name of a ServiceAccount`);
  }
  return {
    trustedServiceAccounts,
    audience: readString(env, 'OPERATOR_TOKEN_AUDIENCE', DEFAULT_OPERATOR_AUDIENCE),
    reviewCacheMs: readInt(env, 'TOKEN_REVIEW_CACHE_SECONDS', 10, { min: 0, max: 3600 }) * 1000,
    reviewTimeoutMs: readInt(env, 'TOKEN_REVIEW_TIMEOUT_MS', 3000, { min: 100, max: 60_000 }),
  };
}

/**
 * With BLOB_STORE=s3, objects in the bucket (result-cache/blob-cache.ts); otherwise MongoDB GridFS
 * when MONGODB_URI is set, else files in DATA_DIR/result-cache, each with a cache of its own that
 * shares recency where the blob store cannot. RESULT_CACHE_MAX_MB bounds any of them.
 */
export type ResultCacheConfig =
  | { backend: 'disk'; dir: string; maxBytes: number }
  | { backend: 'gridfs'; mongodbUri: string; maxBytes: number }
  | { backend: 'blobs'; blobs: BlobStoreConfig; maxBytes: number };

function loadResultCacheConfig(env: Env, store: StoreConfig, blobs: BlobStoreConfig): ResultCacheConfig {
  const maxBytes = readInt(env, 'RESULT_CACHE_MAX_MB', 1024, { min: 1, max: 10_000_000 }) * 1024 * 1024;
  if (blobs.kind === 's3') return { backend: 'blobs', blobs, maxBytes };
  return store.backend === 'mongo' ? { backend: 'gridfs', mongodbUri: store.mongodbUri, maxBytes } : { backend: 'disk', dir: path.join(store.dataDir, 'result-cache'), maxBytes };
}

export interface RemoteRendererConfig {
  /** Base URLs of the renderer services (RENDERER_URL, comma-separated); empty with discovery. */
  urls: URL[];
  /** Set when RENDERER_SERVICE is: the renderers are the ready endpoints of that Service's EndpointSlices. */
  discovery: RendererDiscoveryConfig | undefined;
  /** RENDERER_TOKEN, sent as `Authorization: Bearer` when set. */
  token: string | undefined;
  /** Deadline for one capture, both attempts included; past it the client gets 408. */
  timeoutMs: number;
  /** How long to wait for a TCP connection before trying another renderer. */
  connectTimeoutMs: number;
  /** How often each renderer's GET /v1/status is probed. */
  probeIntervalMs: number;
  /** A status probe not answered in this time marks the renderer unavailable until the next one. */
  probeTimeoutMs: number;
}

export interface RendererDiscoveryConfig {
  /** RENDERER_SERVICE: the renderer Service's name. */
  service: string;
  /** The API's own namespace (POD_NAMESPACE, else the pod's service account namespace file). */
  namespace: string;
  /** RENDERER_SERVICE_PORT_NAME: the Service port whose endpoints take captures. */
  portName: string;
}

/** Where Kubernetes mounts the pod's namespace next to its service account token. */
export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export function loadApiConfig(env: Env): ApiConfig {
  const renderer = loadRendererConfig(env);
  const store = loadStoreConfig(env);
  const blobs = loadBlobStoreConfig(env, store);
  const mode = readEnum(env, 'MODE', MODES, 'self-hosted');
  const storage = loadStorageConfig(env);
  if (mode === 'hosted' && storage.destinations.length > 0) {
    throw new ConfigError('STORAGE_DESTINATIONS is for self-hosted mode: in hosted mode destinations belong to accounts (POST /api/destinations, or a Site\'s spec.storage on Kubernetes)');
  }
  return {
    ...loadHttpServiceConfig(env, 'PORT', 3000),
    mode,
    apiKey: readOptionalString(env, 'API_KEY'),
    renderer,
    remoteRenderer: loadRemoteRendererConfig(env, renderer.captureTimeoutMs),
    store,
    resultCache: loadResultCacheConfig(env, store, blobs),
    blobs,
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 60, { min: 1, max: 1_000_000 }),
    dashboard: loadDashboardConfig(env),
    captures: loadCapturesConfig(env),
    monitors: loadMonitorsConfig(env, store, blobs),
    operatorAuth: loadOperatorAuthConfig(env),
    storage,
  };
}

function loadRemoteRendererConfig(env: Env, rendererCaptureTimeoutMs: number): RemoteRendererConfig | undefined {
  const urls = readList(env, 'RENDERER_URL').map(parseRendererUrl);
  const discovery = loadDiscoveryConfig(env);
  if (urls.length === 0 && !discovery) return undefined;
  if (urls.length > 0 && discovery) throw new ConfigError('Set either RENDERER_URL (a fixed list) or RENDERER_SERVICE (EndpointSlice discovery), not both');
  return {
    urls,
    discovery,
    token: readOptionalString(env, 'RENDERER_TOKEN'),
    // The renderer's own backstop answers a typed 408 first; this catches a renderer that hangs.
    timeoutMs: readInt(env, 'RENDERER_TIMEOUT_MS', rendererCaptureTimeoutMs + 5000, { min: 1000 }),
    connectTimeoutMs: readInt(env, 'RENDERER_CONNECT_TIMEOUT_MS', 2000, { min: 100, max: 60_000 }),
    probeIntervalMs: readInt(env, 'RENDERER_PROBE_INTERVAL_MS', 2000, { min: 100, max: 60_000 }),
    probeTimeoutMs: readInt(env, 'RENDERER_PROBE_TIMEOUT_MS', 1500, { min: 100, max: 60_000 }),
  };
}

function loadDiscoveryConfig(env: Env): RendererDiscoveryConfig | undefined {
  const service = readOptionalString(env, 'RENDERER_SERVICE');
  if (service === undefined) return undefined;
  const namespace = readOptionalString(env, 'POD_NAMESPACE') ?? readNamespaceFile();
  if (namespace === undefined) throw new ConfigError('RENDERER_SERVICE needs the API\'s namespace: set POD_NAMESPACE, or run in a pod with a service account');
  return { service, namespace, portName: readString(env, 'RENDERER_SERVICE_PORT_NAME', 'http') };
}

function readNamespaceFile(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function parseRendererUrl(value: string): URL {
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ConfigError(`RENDERER_URL must list http(s) URLs, got "${value}"`);
  }
  // Credentials in a URL end up in logs and error messages; the token has its own variable.
  if (url.username || url.password) throw new ConfigError('RENDERER_URL must not carry credentials: use RENDERER_TOKEN');
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
