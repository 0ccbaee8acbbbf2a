import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { ConfigError, readBool, readInt, readList, readOptionalString, readString, type Env } from '../../lib/env.ts';
import { DEFAULT_OPERATOR_AUDIENCE } from '../../lib/operator-api.ts';

/** The operator's configuration, read once at start-up. Durations are held in milliseconds. */
export interface OperatorConfig {
  /** Namespaces to watch; empty means all of them. */
  watchNamespaces: string[];
  host: string;
  /** /healthz, /readyz and /metrics. */
  port: number;
  logLevel: string;
  leaderElection: {
    enabled: boolean;
    leaseName: string;
    leaseNamespace: string;
    identity: string;
    /**
     * LEASE_OWNER_DEPLOYMENT: a Deployment in the Lease's namespace (the operator's own) that owns
     * the Lease, so that deleting it (helm uninstall) lets the garbage collector delete the Lease.
     */
    ownerDeployment: string | undefined;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  resyncMs: number;
  /** Cap of the per-key retry backoff (which starts at 5 ms and doubles). */
  maxRetryDelayMs: number;
  /** The hosted API, which owns the store: the operator reconciles through it and never opens the store. */
  api: OperatorApiConfig;
  /** How often every PageMonitor's status is refreshed from its last run (MONITOR_STATUS_INTERVAL_SECONDS). */
  monitorStatusIntervalMs: number;
}

export interface OperatorApiConfig {
  /** API_URL: the hosted API's base URL (in the chart, its Service). */
  url: URL;
  /** API_TIMEOUT_SECONDS: one call's deadline; past it the API counts as unavailable. */
  timeoutMs: number;
  /** API_TOKEN_AUDIENCE: the audience of the ServiceAccount token, as the API reviews it. */
  audience: string;
  /** API_TOKEN_FILE: a projected ServiceAccount token (in a pod). Unset: TokenRequests for serviceAccount. */
  tokenFile: string | undefined;
  /** OPERATOR_SERVICE_ACCOUNT (namespace/name): whose token to request outside a cluster. */
  serviceAccount: { namespace: string; name: string };
}

function loadApiConfig(env: Env): OperatorApiConfig {
  const raw = readString(env, 'API_URL', 'http://localhost:3000/');
  const url = URL.parse(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ConfigError(`API_URL must be an http(s) URL, got "${raw}"`);
  if (url.username || url.password) throw new ConfigError('API_URL must not carry credentials: the operator authenticates with its ServiceAccount token');
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const serviceAccount = readString(env, 'OPERATOR_SERVICE_ACCOUNT', `${readOptionalString(env, 'POD_NAMESPACE') ?? 'default'}/viewfinder-operator`);
  const [namespace, name, ...rest] = serviceAccount.split('/');
  if (!namespace || !name || rest.length > 0 || !NAMESPACE_NAME.test(namespace)) {
    throw new ConfigError(`OPERATOR_SERVICE_ACCOUNT must be namespace/name, got "${serviceAccount}"`);
  }
  return {
    url,
    timeoutMs: readInt(env, 'API_TIMEOUT_SECONDS', 10, { min: 1, max: 300 }) * 1000,
    audience: readString(env, 'API_TOKEN_AUDIENCE', DEFAULT_OPERATOR_AUDIENCE),
    tokenFile: readOptionalString(env, 'API_TOKEN_FILE'),
    serviceAccount: { namespace, name },
  };
}

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function loadOperatorConfig(env: Env): OperatorConfig {
  const watchNamespaces = readList(env, 'WATCH_NAMESPACE');
  for (const namespace of watchNamespaces) {
    if (!NAMESPACE_NAME.test(namespace)) throw new ConfigError(`WATCH_NAMESPACE: "${namespace}" is not a namespace name`);
  }
  const leaseDurationSeconds = readInt(env, 'LEASE_DURATION_SECONDS', 15, { min: 1, max: 3600 });
  const renewDeadlineSeconds = readInt(env, 'LEASE_RENEW_DEADLINE_SECONDS', 10, { min: 1, max: 3600 });
  const retryPeriodSeconds = readInt(env, 'LEASE_RETRY_PERIOD_SECONDS', 2, { min: 1, max: 3600 });
  if (renewDeadlineSeconds >= leaseDurationSeconds) {
    throw new ConfigError('LEASE_RENEW_DEADLINE_SECONDS must be shorter than LEASE_DURATION_SECONDS, or two leaders could overlap');
  }
  if (retryPeriodSeconds >= renewDeadlineSeconds) {
    throw new ConfigError('LEASE_RETRY_PERIOD_SECONDS must be shorter than LEASE_RENEW_DEADLINE_SECONDS');
  }
  return {
    watchNamespaces,
    host: readString(env, 'OPERATOR_HOST', '0.0.0.0'),
    port: readInt(env, 'OPERATOR_PORT', 8081, { min: 0, max: 65_535 }),
    logLevel: readString(env, 'LOG_LEVEL', 'info'),
    leaderElection: {
      enabled: readBool(env, 'LEADER_ELECTION', true),
      leaseName: readString(env, 'LEASE_NAME', 'viewfinder-operator'),
      // In a pod, POD_NAMESPACE comes from the downward API; outside, the one watched namespace or "default".
      leaseNamespace: readOptionalString(env, 'LEASE_NAMESPACE') ?? readOptionalString(env, 'POD_NAMESPACE') ?? (watchNamespaces.length === 1 ? (watchNamespaces[0] as string) : 'default'),
      identity: readOptionalString(env, 'POD_NAME') ?? `${os.hostname()}-${randomBytes(4).toString('hex')}`,
      ownerDeployment: readOptionalString(env, 'LEASE_OWNER_DEPLOYMENT'),
      leaseDurationMs: leaseDurationSeconds * 1000,
      renewDeadlineMs: renewDeadlineSeconds * 1000,
      retryPeriodMs: retryPeriodSeconds * 1000,
    },
    resyncMs: readInt(env, 'RESYNC_PERIOD_SECONDS', 300, { min: 1, max: 86_400 }) * 1000,
    maxRetryDelayMs: readInt(env, 'MAX_RETRY_DELAY_SECONDS', 300, { min: 1, max: 86_400 }) * 1000,
    api: loadApiConfig(env),
    monitorStatusIntervalMs: readInt(env, 'MONITOR_STATUS_INTERVAL_SECONDS', 30, { min: 1, max: 3600 }) * 1000,
  };
}
