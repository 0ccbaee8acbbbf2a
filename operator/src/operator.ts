import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { Informer, keyOf } from '../../lib/k8s/informer.ts';
import type { Logger } from '../../lib/logger.ts';
import type { ApiClient } from './api/client.ts';
import type { OperatorConfig } from './config.ts';
import { reconcileApiKey } from './controllers/api-key.ts';
import type { ControllerDeps } from './controllers/common.ts';
import { isSteady, pageMonitorReconciler } from './controllers/page-monitor.ts';
import { reconcileSite } from './controllers/site.ts';
import { startHealthServer, type HealthServer } from './health.ts';
import { KubeClient } from './k8s/client.ts';
import { Controller } from './k8s/controller.ts';
import { EventRecorder } from './k8s/events.ts';
import { LeaderElector } from './k8s/leader-election.ts';
import { createOperatorMetrics, type OperatorMetrics } from './metrics.ts';
import { API_VERSION, MANAGED_BY_LABEL, OPERATOR_NAME, objectKey, type ApiKeyResource, type PageMonitorResource, type SiteResource } from './resources.ts';

/**
 * The operator, wired: informers for Sites, ApiKeys, PageMonitors and the Secrets it wrote feed one controller
 * per kind; leader election decides whether this replica's controllers run; the health server
 * reports. main.ts runs it against the real cluster, the tests against the fake API server.
 */
export interface Operator {
  port: number;
  metrics: OperatorMetrics;
  isLeader(): boolean;
  /** Sites, ApiKeys, PageMonitors, Secrets: one informer per kind and watched namespace. */
  informers: Array<Informer<SiteResource> | Informer<ApiKeyResource> | Informer<PageMonitorResource> | Informer<V1Secret>>;
  /** Stops; `release: false` leaves the Lease to expire, as a crash would. */
  stop(options?: { release?: boolean }): Promise<void>;
}

export interface OperatorDeps {
  config: OperatorConfig;
  kubeConfig: KubeConfig;
  /** The hosted API, which owns the store. */
  api: ApiClient;
  logger: Logger;
}

export async function startOperator({ config, kubeConfig, api, logger }: OperatorDeps): Promise<Operator> {
  const kube = new KubeClient(kubeConfig);
  const metrics = createOperatorMetrics();
  const deps: ControllerDeps = { kube, api, events: new EventRecorder(kube, logger), logger };
  const queue = { maxDelayMs: config.maxRetryDelayMs };
  const sites = new Controller({ kind: 'Site', reconcile: (ns, name) => reconcileSite(deps, ns, name), metrics, logger, queue });
  const apiKeys = new Controller({ kind: 'ApiKey', reconcile: (ns, name) => reconcileApiKey(deps, ns, name), metrics, logger, queue });
  const monitorReconciler = pageMonitorReconciler(deps);
  const monitors = new Controller({ kind: 'PageMonitor', reconcile: (ns, name) => monitorReconciler.reconcile(ns, name), metrics, logger, queue });

  const namespaces: Array<string | undefined> = config.watchNamespaces.length === 0 ? [undefined] : config.watchNamespaces;
  const siteInformers: Informer<SiteResource>[] = [];
  const apiKeyInformers: Informer<ApiKeyResource>[] = [];
  const secretInformers: Informer<V1Secret>[] = [];
  const monitorInformers: Informer<PageMonitorResource>[] = [];

  /** A Site's changes can make its ApiKeys Ready (or not): they are reconciled again. */
  const enqueueDependents = (site: SiteResource) => {
    for (const informer of apiKeyInformers) {
      for (const key of informer.list()) {
        if (key.metadata.namespace === site.metadata.namespace && key.spec.siteRef === site.metadata.name) apiKeys.enqueue(keyOf(key));
      }
    }
  };
  /** A PageMonitor in full: its Site's id and domains are looked up again, the monitor PUT. */
  const enqueueMonitorInFull = (monitor: PageMonitorResource) => {
    monitorReconciler.requestFull(keyOf(monitor));
    monitors.enqueue(keyOf(monitor));
  };
  /** A PageMonitor with a siteRef follows its Site (it waits for it; the Site's domains apply). */
  const enqueueMonitorsOf = (site: SiteResource) => {
    for (const informer of monitorInformers) {
      for (const monitor of informer.list()) {
        if (monitor.metadata.namespace === site.metadata.namespace && monitor.spec.siteRef === site.metadata.name) enqueueMonitorInFull(monitor);
      }
    }
  };
  /** A Secret that changed or went: its ApiKey checks it still holds the key. */
  const enqueueOwner = (secret: V1Secret) => {
    const owner = secret.metadata?.ownerReferences?.find((ref) => ref.controller && ref.kind === 'ApiKey' && ref.apiVersion === API_VERSION);
    if (owner && secret.metadata?.namespace) apiKeys.enqueue(objectKey(secret.metadata.namespace, owner.name));
  };

  for (const namespace of namespaces) {
    const scope = namespace === undefined ? '' : `/namespaces/${namespace}`;
    const common = { kubeConfig, resyncMs: config.resyncMs, logger };
    siteInformers.push(
      new Informer<SiteResource>({
        ...common,
        name: `Site ${namespace ?? '(all namespaces)'}`,
        list: () => kube.listResources<SiteResource>('Site', namespace),
        watchPath: `/apis/${API_VERSION}${scope}/sites`,
        handlers: {
          onUpsert: (site) => {
            sites.enqueue(keyOf(site));
            enqueueDependents(site);
            enqueueMonitorsOf(site);
          },
          onDelete: (site) => {
            sites.enqueue(keyOf(site));
            enqueueMonitorsOf(site);
            enqueueDependents(site);
          },
        },
      }),
    );
    apiKeyInformers.push(
      new Informer<ApiKeyResource>({
        ...common,
        name: `ApiKey ${namespace ?? '(all namespaces)'}`,
        list: () => kube.listResources<ApiKeyResource>('ApiKey', namespace),
        watchPath: `/apis/${API_VERSION}${scope}/apikeys`,
        handlers: { onUpsert: (key) => apiKeys.enqueue(keyOf(key)), onDelete: (key) => apiKeys.enqueue(keyOf(key)) },
      }),
    );
    monitorInformers.push(
      new Informer<PageMonitorResource>({
        ...common,
        name: `PageMonitor ${namespace ?? '(all namespaces)'}`,
        list: () => kube.listResources<PageMonitorResource>('PageMonitor', namespace),
        watchPath: `/apis/${API_VERSION}${scope}/pagemonitors`,
        // A change of the resource: in full unless it only touched the status (isSteady decides in the reconcile).
        handlers: { onUpsert: (monitor) => monitors.enqueue(keyOf(monitor)), onDelete: (monitor) => monitors.enqueue(keyOf(monitor)), onResync: enqueueMonitorInFull },
      }),
    );
    secretInformers.push(
      new Informer<V1Secret>({
        ...common,
        name: `Secret ${namespace ?? '(all namespaces)'}`,
        list: () => kube.listSecrets(namespace, `${MANAGED_BY_LABEL}=${OPERATOR_NAME}`),
        watchPath: `/api/v1${scope}/secrets`,
        labelSelector: `${MANAGED_BY_LABEL}=${OPERATOR_NAME}`,
        // The ApiKeys' own resync covers their Secrets.
        handlers: { onUpsert: enqueueOwner, onDelete: enqueueOwner, onResync: () => {} },
      }),
    );
  }
  const informers = [...siteInformers, ...apiKeyInformers, ...monitorInformers, ...secretInformers];
  const controllers = [sites, apiKeys, monitors];
  // The API runs monitors on its own schedule: the status of each Ready one follows it every
  // interval, with one GET of its monitor. The others wait for their retry or a change of spec or Site.
  let statusTimer: NodeJS.Timeout | undefined;
  const refreshMonitors = () => {
    for (const informer of monitorInformers) for (const monitor of informer.list()) if (isSteady(monitor)) monitors.enqueue(keyOf(monitor));
  };
  let synced = false;

  const startControllers = () => {
    for (const controller of controllers) controller.start();
    // A new leader acts on everything, not only on what changes from now on.
    for (const informer of [...siteInformers, ...apiKeyInformers, ...monitorInformers]) informer.resync();
    clearInterval(statusTimer);
    statusTimer = setInterval(refreshMonitors, config.monitorStatusIntervalMs);
    metrics.leader.set(1);
  };
  const pauseControllers = async () => {
    metrics.leader.set(0);
    clearInterval(statusTimer);
    await Promise.all(controllers.map((controller) => controller.pause()));
  };

  let elector: LeaderElector | undefined;
  const health = await startHealthServer({
    host: config.host,
    port: config.port,
    registry: metrics.registry,
    ready: () => synced,
    apiUnavailable: () => api.checkAvailable(),
    leader: () => elector?.isLeader ?? true,
  });

  await Promise.all(informers.map((informer) => informer.start()));
  synced = true;
  logger.info({ namespaces: config.watchNamespaces.length === 0 ? 'all' : config.watchNamespaces, port: health.port }, 'Listed the resources; watching');

  const { leaderElection } = config;
  elector = leaderElection.enabled
    ? new LeaderElector({
        kube,
        namespace: leaderElection.leaseNamespace,
        name: leaderElection.leaseName,
        identity: leaderElection.identity,
        ownerDeployment: leaderElection.ownerDeployment,
        leaseDurationMs: leaderElection.leaseDurationMs,
        renewDeadlineMs: leaderElection.renewDeadlineMs,
        retryPeriodMs: leaderElection.retryPeriodMs,
        logger,
        onStartedLeading: startControllers,
        onStoppedLeading: pauseControllers,
      })
    : undefined;
  if (elector) elector.start();
  else startControllers();

  return {
    port: health.port,
    metrics,
    informers,
    isLeader: () => elector?.isLeader ?? true,
    async stop(options = {}) {
      clearInterval(statusTimer);
      if (elector) await elector.stop(options);
      for (const informer of informers) informer.stop();
      await Promise.all(controllers.map((controller) => controller.shutDown()));
      await health.close();
    },
  };
}
