import type { ManagedMonitor, PutManagedMonitor } from '../../../lib/operator-api.ts';
import { REASONS, isReady, withCondition, withReady } from '../conditions.ts';
import { objectKey, type Condition, type PageMonitorResource } from '../resources.ts';
import { withPageCredentials } from './page-credentials.ts';
import { NotReady, apiCall, readyState, reconcileResource, requireAccount, writeStatus, type ControllerDeps, type ReconcileResult } from './common.ts';

type MonitorStatus = NonNullable<PageMonitorResource['status']>;

/**
 * The PageMonitor controller: the resource becomes a monitor in the API (managedBy), which owns the
 * schedule and runs it; the operator mirrors the last run back: per-page status, lastRunTime,
 * nextRunTime, the largest diff, the Ready and Changed conditions (with observedGeneration), and
 * events, each recorded once per run (PageChanged and RunFailed, Warning) or per new baseline
 * (BaselineAccepted, Normal).
 *
 * Two depths of reconcile keep the API's load bounded:
 * - in full (a spec change, a resource not Ready, its Site changed, a resync, a new leader): the
 *   account or Site is resolved and the monitor PUT (idempotent in the API);
 * - a refresh (the status interval, a status-only change) of a resource Ready at its generation:
 *   one GET of the API's monitor, mirrored into status. A monitor gone from the API is PUT again.
 */
export interface PageMonitorReconciler {
  reconcile(namespace: string, name: string): Promise<ReconcileResult>;
  /** The next reconcile of this key goes in full (its Site changed, a resync). */
  requestFull(key: string): void;
}

export function pageMonitorReconciler(deps: ControllerDeps): PageMonitorReconciler {
  /** Keys asked to go in full, with a ticket: a request made during a reconcile outlives it. */
  const full = new Map<string, number>();
  let tickets = 0;
  return {
    requestFull(key) {
      tickets += 1;
      full.set(key, tickets);
    },
    async reconcile(namespace, name) {
      const key = objectKey(namespace, name);
      const ticket = full.get(key);
      const result = await reconcilePageMonitor(deps, namespace, name, ticket !== undefined);
      if (result.outcome !== 'not_ready' && full.get(key) === ticket) full.delete(key);
      return result;
    },
  };
}

/** Ready at its current generation, with a monitor in the API: a refresh needs only the monitor's GET. */
export function isSteady(resource: PageMonitorResource): boolean {
  const { status, metadata } = resource;
  return status?.monitorId !== undefined && status.observedGeneration === metadata.generation && isReady(status.conditions);
}

function reconcilePageMonitor(deps: ControllerDeps, namespace: string, name: string, inFull: boolean): Promise<ReconcileResult> {
  const { api, logger } = deps;
  const object = `${namespace}/${name}`;
  return reconcileResource<PageMonitorResource>(deps, 'PageMonitor', namespace, name, {
    async removeFromStore() {
      const monitorId = await api.deleteMonitor(namespace, name);
      if (monitorId) logger.info({ kind: 'PageMonitor', object, monitorId }, 'Deleted the monitor, its runs and pictures');
    },
    async apply(resource, now) {
      if (!inFull && isSteady(resource)) {
        const monitor = await apiCall(() => api.getMonitor(namespace, name));
        if (monitor && monitor.id === resource.status?.monitorId) return mirror(deps, resource, monitor, now);
      }
      const wanted = await wantedMonitor(deps, resource);
      const monitor = await apiCall(() => api.putMonitor(namespace, name, wanted));
      if (monitor.id !== resource.status?.monitorId) logger.info({ kind: 'PageMonitor', object, monitorId: monitor.id }, 'Reconciled the monitor into the API');
      return mirror(deps, resource, monitor, now);
    },
  });
}

/** The PUT body: the spec, with spec.siteRef resolved to the API's site (and its account) or spec.account checked. */
async function wantedMonitor(deps: ControllerDeps, resource: PageMonitorResource): Promise<PutManagedMonitor> {
  const { api } = deps;
  const { spec, metadata } = resource;
  let accountId: string;
  let siteId: string | undefined;
  if (spec.siteRef !== undefined) {
    const site = await apiCall(() => api.getSite(metadata.namespace, spec.siteRef as string));
    if (!site) {
      throw new NotReady(REASONS.SiteNotFound, `spec.siteRef: Site ${metadata.namespace}/${spec.siteRef} does not exist or is not reconciled into the API yet`);
    }
    accountId = site.accountId;
    siteId = site.id;
  } else {
    accountId = spec.account as string;
    await requireAccount(api, accountId);
  }
  return {
    accountId,
    uid: metadata.uid,
    ...(siteId ? { siteId } : {}),
    schedule: spec.schedule,
    ...(spec.timeZone !== undefined ? { timeZone: spec.timeZone } : {}),
    ...(spec.suspend !== undefined ? { suspend: spec.suspend } : {}),
    ...(spec.historyLimit !== undefined ? { historyLimit: spec.historyLimit } : {}),
    ...(spec.compare !== undefined ? { compare: spec.compare } : {}),
    pages: await withPageCredentials(deps.kube, metadata.namespace, spec.pages),
  };
}

/** Records the events of what is new since the status was written, then writes the status. */
async function mirror(deps: ControllerDeps, resource: PageMonitorResource, monitor: ManagedMonitor, now: Date): Promise<void> {
  const generation = resource.metadata.generation;
  const previous = resource.status;
  const run = monitor.lastRun;
  const ready = monitor.nextRunAt === null ? `Monitor ${monitor.id} is suspended` : `Monitor ${monitor.id} runs on "${monitor.schedule}"`;
  const status: MonitorStatus = {
    monitorId: monitor.id,
    observedGeneration: generation,
    ...(monitor.nextRunAt ? { nextRunTime: monitor.nextRunAt } : {}),
    ...(run ? { lastRunId: run.id, lastRunTime: run.finishedAt, largestDiffRatio: readable(Math.max(0, ...run.pages.map((page) => page.diffRatio ?? 0))) } : {}),
    pages: pageStatuses(monitor),
    conditions: withCondition(withReady(previous?.conditions, readyState(ready), generation, now), changedCondition(monitor, generation), now),
  };
  // Before the status: a failed status write retries the events too, and their names make them once.
  if (run && run.id !== previous?.lastRunId) await recordRunEvents(deps, resource, monitor);
  if (monitor.compare.baseline === 'accepted') await recordBaselineEvents(deps, resource, status);
  await writeStatus(deps.kube, resource, status, { replace: true });
}

async function recordRunEvents({ events }: ControllerDeps, resource: PageMonitorResource, monitor: ManagedMonitor): Promise<void> {
  const run = monitor.lastRun as NonNullable<ManagedMonitor['lastRun']>;
  for (const page of run.pages) {
    if (page.outcome === 'changed') {
      const message = `Page ${page.page} changed: ${percent(page.diffRatio ?? 0)} of its pixels differ from the baseline (threshold ${percent(monitor.compare.threshold)}), run ${run.id}`;
      await events.record(resource, 'Warning', REASONS.PageChanged, message, `${run.id}/${page.page}`);
    }
    if (page.outcome === 'failed') {
      await events.record(resource, 'Warning', REASONS.RunFailed, `Page ${page.page} failed in run ${run.id}: ${page.error ?? 'no picture'}`, `${run.id}/${page.page}`);
    }
  }
}

/** A page whose baseline is not the one the status showed: its first picture, or one accepted in the API. */
async function recordBaselineEvents({ events }: ControllerDeps, resource: PageMonitorResource, status: MonitorStatus): Promise<void> {
  for (const page of status.pages ?? []) {
    const before = resource.status?.pages?.find((candidate) => candidate.name === page.name)?.baselineCaptureId;
    if (!page.baselineCaptureId || before === page.baselineCaptureId) continue;
    const message = before
      ? `Page ${page.name}: picture ${page.baselineCaptureId} was accepted as the new baseline`
      : `Page ${page.name}: its first picture ${page.baselineCaptureId} is the baseline`;
    await events.record(resource, 'Normal', REASONS.BaselineAccepted, message, `${page.name}/${page.baselineCaptureId}`);
  }
}

/**
 * A ratio for people reading `kubectl get vfmon`: four significant digits (0.08589, not
 * 0.08588758680555555), which keeps a ratio far below the smallest threshold distinct from 0.
 * The API's runs keep the exact figure.
 */
function readable(ratio: number): number {
  return Number(ratio.toPrecision(4));
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(2)} %`;
}

/** The CRD keeps at most this many regions per page. */
const MAX_STATUS_REGIONS = 50;

function pageStatuses(monitor: ManagedMonitor): NonNullable<MonitorStatus['pages']> {
  return monitor.pages.map(({ name }) => {
    const run = monitor.lastRun;
    const result = run?.pages.find((page) => page.page === name);
    const baseline = monitor.baselines[name];
    return {
      name,
      ...(baseline ? { baselineCaptureId: baseline } : {}),
      ...(result && run
        ? {
            lastRunTime: run.finishedAt,
            changed: result.outcome === 'changed',
            ...(result.diffRatio !== null ? { diffRatio: readable(result.diffRatio) } : {}),
            ...(result.captureImageId ? { lastCaptureId: result.captureImageId } : {}),
            ...(result.error ? { lastError: result.error } : {}),
            regions: result.regions.slice(0, MAX_STATUS_REGIONS),
          }
        : {}),
    };
  });
}

function changedCondition(monitor: ManagedMonitor, generation: number): Omit<Condition, 'lastTransitionTime'> {
  const run = monitor.lastRun;
  if (!run) return { type: 'Changed', status: 'Unknown', reason: REASONS.NotRunYet, message: 'No run has finished yet', observedGeneration: generation };
  const changed = run.pages.filter((page) => page.outcome === 'changed');
  if (changed.length > 0) {
    const message = changed.map((page) => `${page.page}: ${percent(page.diffRatio ?? 0)}`).join(', ');
    return { type: 'Changed', status: 'True', reason: REASONS.PageChanged, message, observedGeneration: generation };
  }
  const failed = run.pages.filter((page) => page.outcome === 'failed').length;
  const message = `No page changed beyond ${percent(monitor.compare.threshold)} in the run of ${run.finishedAt}${failed > 0 ? ` (${failed} failed)` : ''}`;
  return { type: 'Changed', status: 'False', reason: REASONS.NoChange, message, observedGeneration: generation };
}
