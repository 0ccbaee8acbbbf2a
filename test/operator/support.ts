import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from '@kubernetes/client-node';
import { createJobRunner } from '../../lib/jobs/runner.ts';
import { openMonitorImages } from '../../services/api/src/monitors/images.ts';
import { startMonitorService, type MonitorService } from '../../services/api/src/monitors/service.ts';
import type { Logger } from '../../lib/logger.ts';
import { openStore } from '../../lib/store/open.ts';
import type { Account, Store } from '../../lib/store/store.ts';
import { ApiClient } from '../../operator/src/api/client.ts';
import { tokenRequestSource } from '../../operator/src/api/token.ts';
import { loadOperatorConfig, type OperatorConfig } from '../../operator/src/config.ts';
import { createApp } from '../../services/api/src/app.ts';
import { cachedReviewer, kubeTokenReviewer } from '../../services/api/src/auth/operator-token.ts';
import type { Renderer } from '../../services/renderer/src/renderer.ts';
import { httpStatusOf } from '../../lib/k8s/api-errors.ts';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { GROUP, PLURALS, VERSION, type ApiKeyResource, type Kind, type PageMonitorResource, type SiteResource } from '../../operator/src/resources.ts';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '../support/fake-kube-apiserver.ts';
import { createNamespace, deleteNamespace, testNamespaceName } from '../support/namespaces.ts';
import { silentLogger, testConfig } from '../support/harness.ts';
import { createStubRenderer } from '../support/stub-renderer.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';
import { kubectl } from '../support/k8s-tools.ts';

/**
 * Where the operator's integration tests run: the in-process fake API server, or, when KUBECONFIG
 * is set, the real cluster it points at (in a fresh namespace, with the CRDs applied).
 */
export interface KubeTarget {
  kubeConfig: KubeConfig;
  namespace: string;
  /** Only on the fake: lets a test break watches or inspect stored objects. */
  fake: FakeKubeApiServer | undefined;
  close(): Promise<void>;
}

export const REAL_KUBECONFIG = process.env.KUBECONFIG;

export async function startFakeTarget(options: { historyLimit?: number } = {}): Promise<KubeTarget> {
  const fake = await startFakeKubeApiServer(options);
  return { kubeConfig: fake.kubeConfig(), namespace: 'shop', fake, close: () => fake.close() };
}

/**
 * Describes `title` once per target: the in-process fake always, the real API server when KUBECONFIG
 * is set; without it, the real leg is one skipped test that says why.
 */
export function describeOnEachTarget(title: string, timeoutMs: number, body: (start: () => Promise<KubeTarget>) => void): void {
  const legs: Array<{ name: string; start: (() => Promise<KubeTarget>) | undefined }> = [
    { name: 'the fake API server', start: () => startFakeTarget() },
    { name: 'a real cluster (KUBECONFIG)', start: REAL_KUBECONFIG ? startRealTarget : undefined },
  ];
  for (const leg of legs) {
    describe(`${title} against ${leg.name}`, function () {
      this.timeout(timeoutMs);
      const start = leg.start;
      if (!start) {
        skippedWithoutCluster(`"${title}" against a real cluster; the fake API server leg ran`);
        return;
      }
      body(start);
    });
  }
}

export async function startRealTarget(): Promise<KubeTarget> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  // Applied as users apply them (kubectl, server-side), never read into client-node's models and
  // written back: a model drops the fields it does not know, and the CRD left on the cluster then
  // differs from the chart's, so that a `helm install` beside the test (the real-node legs) fails on
  // the conflict. The same content from another field manager is no conflict.
  for (const file of ['site.yaml', 'apikey.yaml', 'pagemonitor.yaml']) {
    const crdFile = path.join(import.meta.dirname, '..', '..', 'crds', file);
    const applied = kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=viewfinder-tests', '-f', crdFile]);
    if (applied.status !== 0) throw new Error(`kubectl apply of crds/${file} failed: ${applied.output}`);
    const established = kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', crdFile]);
    if (established.status !== 0) throw new Error(`the CRD of crds/${file} is not Established: ${established.output}`);
  }
  const namespace = testNamespaceName();
  await createNamespace(kubeConfig, namespace);
  // The operator's identity, and another one that the API must not trust.
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [OPERATOR_SERVICE_ACCOUNT, 'intruder']) await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  return {
    kubeConfig,
    namespace,
    fake: undefined,
    // The operator has stopped by now (useOperator stops it first): the namespace must still go.
    close: () => deleteNamespace(kubeConfig, namespace),
  };
}

/** The objects a test applies, through client-node as kubectl would. */
export class Resources {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  readonly namespace: string;

  constructor(target: KubeTarget) {
    this.custom = target.kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = target.kubeConfig.makeApiClient(CoreV1Api);
    this.namespace = target.namespace;
  }

  async createSite(name: string, spec: SiteResource['spec']): Promise<SiteResource> {
    return (await this.custom.createNamespacedCustomObject({
      ...this.coordinates('Site'),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Site', metadata: { name }, spec },
    })) as SiteResource;
  }

  async createApiKey(name: string, spec: ApiKeyResource['spec']): Promise<ApiKeyResource> {
    return (await this.custom.createNamespacedCustomObject({
      ...this.coordinates('ApiKey'),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'ApiKey', metadata: { name }, spec },
    })) as ApiKeyResource;
  }

  async createPageMonitor(name: string, spec: PageMonitorResource['spec']): Promise<PageMonitorResource> {
    return (await this.custom.createNamespacedCustomObject({
      ...this.coordinates('PageMonitor'),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'PageMonitor', metadata: { name }, spec },
    })) as PageMonitorResource;
  }

  async get<T extends SiteResource | ApiKeyResource | PageMonitorResource>(kind: Kind, name: string): Promise<T | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ ...this.coordinates(kind), name })) as T;
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** `kubectl patch --type merge -p '{"spec": ...}'`. */
  async patchSpec(kind: Kind, name: string, spec: object): Promise<void> {
    await this.custom.patchNamespacedCustomObject({ ...this.coordinates(kind), name, body: { spec } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  }

  /** A merge patch of the status subresource (as a controller would write it). */
  async patchStatus(kind: Kind, name: string, status: object): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus({ ...this.coordinates(kind), name, body: { status } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  }

  async delete(kind: Kind, name: string): Promise<void> {
    await this.custom.deleteNamespacedCustomObject({ ...this.coordinates(kind), name });
  }

  async secret(name: string): Promise<V1Secret | undefined> {
    try {
      return await this.core.readNamespacedSecret({ namespace: this.namespace, name });
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async createSecret(name: string, data: Record<string, string>): Promise<void> {
    await this.core.createNamespacedSecret({ namespace: this.namespace, body: { metadata: { name }, data: encode(data) } });
  }

  /** Replaces the Secret's data (a new resourceVersion), as `kubectl apply` of new keys would. */
  async replaceSecretData(name: string, data: Record<string, string>): Promise<void> {
    await this.core.replaceNamespacedSecret({ namespace: this.namespace, name, body: { metadata: { name }, data: encode(data) } });
  }

  async deleteSecret(name: string): Promise<void> {
    await this.core.deleteNamespacedSecret({ namespace: this.namespace, name });
  }

  /** The plaintext key the operator wrote to the Secret, or undefined. */
  async secretKey(name: string): Promise<string | undefined> {
    return this.secretField(name, 'apiKey');
  }

  /** A data field of the Secret, decoded, or undefined. */
  async secretField(name: string, field: string): Promise<string | undefined> {
    const encoded = (await this.secret(name))?.data?.[field];
    return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
  }

  async events(): Promise<Array<{ reason: string; type: string; message: string; object: string }>> {
    const list = await this.core.listNamespacedEvent({ namespace: this.namespace });
    return list.items.map((event) => ({
      reason: event.reason ?? '',
      type: event.type ?? '',
      message: event.message ?? '',
      object: `${event.involvedObject.kind}/${event.involvedObject.name}`,
    }));
  }

  private coordinates(kind: Kind) {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURALS[kind] };
  }
}

function encode(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
}

/**
 * Polls until `probe` returns a value (not undefined or false), a bounded number of times: tests
 * wait for a condition, never for a length of time. The failure names what was awaited and the
 * last value seen.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, attempts = 200, intervalMs = 25): Promise<T> {
  let last: unknown;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    last = await probe();
    if (last !== undefined && last !== false) return last as T;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`Gave up waiting for ${what} after ${attempts} attempts`);
}

/** The Ready condition of a resource (undefined while it has none). */
export function ready(resource: SiteResource | ApiKeyResource | PageMonitorResource | undefined): { status: string; reason: string; message: string } | undefined {
  return resource?.status?.conditions?.find((condition) => condition.type === 'Ready');
}

/** The ServiceAccount the test operators run as, in the target's namespace (the API trusts it). */
export const OPERATOR_SERVICE_ACCOUNT = 'viewfinder-operator';

/**
 * The hosted API the operator reconciles through, in this process: createApp on an embedded store
 * in its own DATA_DIR, listening on loopback, reviewing tokens with the target's API server and
 * trusting the test operator's ServiceAccount. Captures go to a stub renderer unless a real one is
 * given (the acceptance walk-through captures). stop() and start() take it off the network and bring it back on the same port.
 */
export interface HostedApi {
  store: Store;
  /** With `monitors: true`: the API's monitor service (scheduler, job runner, pictures). */
  monitors: MonitorService | undefined;
  dataDir: string;
  url: string;
  /** TokenReviews the API has asked for (its cache keeps this low). */
  reviews(): number;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startHostedApi(
  target: KubeTarget,
  options: { dataDir?: string; env?: Record<string, string>; renderer?: Renderer; monitors?: boolean } = {},
): Promise<HostedApi> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'viewfinder-operator-api-'));
  const config = testConfig({ MODE: 'hosted', DATA_DIR: dataDir, OPERATOR_SERVICE_ACCOUNTS: `${target.namespace}/${OPERATOR_SERVICE_ACCOUNT}`, ...options.env });
  const store = await openStore(config.store);
  const reviewer = cachedReviewer(kubeTokenReviewer(target.kubeConfig, config.operatorAuth.audience), config.operatorAuth.reviewCacheMs);
  const renderer = options.renderer ?? createStubRenderer({ capacity: 1, delayMs: () => 0 });
  const runner = options.monitors ? createJobRunner({ store, logger: silentLogger, concurrency: 2, leaseMs: 30_000, pollIntervalMs: 50 }) : undefined;
  const monitors = runner
    ? startMonitorService({ store, renderer, images: await openMonitorImages(config.monitors.images), runner, config: config.monitors, logger: silentLogger })
    : undefined;
  runner?.start();
  const app = createApp({ config, renderer, logger: silentLogger, store, tokenReviewer: reviewer, ...(monitors ? { monitors } : {}) });
  let server: http.Server | undefined;
  let port = 0;
  const start = async () => {
    const listening = http.createServer(app.callback());
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', resolve);
    });
    port = (listening.address() as AddressInfo).port;
    server = listening;
  };
  const stop = async () => {
    const closing = server;
    server = undefined;
    if (!closing) return;
    closing.closeAllConnections();
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  await start();
  return {
    store,
    monitors,
    dataDir,
    url: `http://127.0.0.1:${port}/`,
    reviews: () => reviewer.reviews,
    stop,
    start,
    async close() {
      await stop();
      monitors?.stop();
      await runner?.stop(1000);
      await store.close();
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An operator's environment for the API: its URL and the ServiceAccount whose tokens it requests. */
export function operatorApiEnv(target: KubeTarget, api: { url: string }): Record<string, string> {
  return { API_URL: api.url, OPERATOR_SERVICE_ACCOUNT: `${target.namespace}/${OPERATOR_SERVICE_ACCOUNT}` };
}

export interface RunningOperator {
  operator: Operator;
  /** The API's store (the operator never opens it): for assertions and for creating accounts, as the CLI would. */
  store: Store;
  api: HostedApi;
  config: OperatorConfig;
  /** Stops the operator, and the API unless it was given. */
  stop(options?: { release?: boolean }): Promise<void>;
}

/**
 * Starts the whole operator as main.ts does (config from env readers, the API client with
 * TokenRequests for its ServiceAccount, client-node), on a loopback port 0, with short lease
 * timings so that fail-over tests finish quickly. Without `api`, it gets a hosted API of its own.
 */
export async function startTestOperator(
  target: KubeTarget,
  options: { api?: HostedApi; apiEnv?: Record<string, string>; env?: Record<string, string>; logger?: Logger } = {},
): Promise<RunningOperator> {
  const api = options.api ?? (await startHostedApi(target, { env: options.apiEnv ?? {} }));
  const config = loadOperatorConfig({
    OPERATOR_HOST: '127.0.0.1',
    OPERATOR_PORT: '0',
    WATCH_NAMESPACE: target.namespace,
    LEASE_NAME: `viewfinder-operator-${randomBytes(3).toString('hex')}`,
    ...operatorApiEnv(target, api),
    ...options.env,
  });
  // Lease timings below the one-second granularity of the env variables.
  config.leaderElection = { ...config.leaderElection, leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };
  config.maxRetryDelayMs = 200;
  const client = new ApiClient({
    baseUrl: config.api.url,
    tokens: tokenRequestSource(target.kubeConfig, config.api.serviceAccount, config.api.audience),
    timeoutMs: config.api.timeoutMs,
  });
  const operator = await startOperator({ config, kubeConfig: target.kubeConfig, api: client, logger: options.logger ?? silentLogger });
  return {
    operator,
    store: api.store,
    api,
    config,
    async stop(stopOptions) {
      await operator.stop(stopOptions);
      if (options.api === undefined) await api.close();
    },
  };
}

/** What each test of the integration suite gets: a target, an operator on it, and an account in its store. */
export interface OperatorContext {
  target: KubeTarget;
  running: RunningOperator;
  kube: Resources;
  account: Account;
}

/** Registers hooks that give every test a fresh target, operator and account, and tear them down. */
export function useOperator(start: () => Promise<KubeTarget>): OperatorContext {
  const context = {} as OperatorContext;
  beforeEach(async () => {
    context.target = await start();
    context.running = await startTestOperator(context.target);
    context.kube = new Resources(context.target);
    context.account = await context.running.store.createAccount({ name: 'Acme' });
  });
  afterEach(async function () {
    // A real cluster's namespace controller takes seconds to remove the namespace, more under load.
    this.timeout(180_000);
    await context.running.stop();
    await context.target.close();
  });
  return context;
}
