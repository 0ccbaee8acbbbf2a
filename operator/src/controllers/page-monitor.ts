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
 * (BaselineAccepted, Normal). Checks (issue #40): the Healthy condition and each page's
 * failingChecks come from the last run's verdicts, and an event marks each change of that state
 * (ChecksFailing, Warning; ChecksPassing, Normal), not every run.
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
    conditions: withCondition(
      withCondition(withReady(previous?.conditions, readyState(ready), generation, now), changedCondition(monitor, generation), now),
      healthyCondition(monitor, generation),
      now,
    ),
  };
  // Before the status: a failed status write retries the events too, and their names make them once.
  if (run && run.id !== previous?.lastRunId) await recordRunEvents(deps, resource, monitor);
  await recordHealthEvents(deps, resource, status);
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

/** The failing checks a status shows, as page/check names: the state whose changes the events mark. */
function failingSet(status: MonitorStatus | undefined): Set<string> {
  return new Set((status?.pages ?? []).flatMap((page) => (page.failingChecks ?? []).map((failure) => `${page.name}/${failure.check}`)));
}

/**
 * An event when the failing checks change: ChecksFailing (Warning) when the set of failing page/check
 * pairs is not the one the status showed and is not empty, ChecksPassing (Normal) when it empties
 * after failing. A run that fails the same checks again records nothing.
 */
async function recordHealthEvents({ events }: ControllerDeps, resource: PageMonitorResource, status: MonitorStatus): Promise<void> {
  const healthy = status.conditions?.find((condition) => condition.type === 'Healthy');
  const before = resource.status?.conditions?.find((condition) => condition.type === 'Healthy');
  if (!healthy || healthy.status === 'Unknown' || !status.lastRunId) return;
  const [previous, next] = [failingSet(resource.status), failingSet(status)];
  const same = previous.size === next.size && [...next].every((name) => previous.has(name));
  if (healthy.status === 'False' && !(same && before?.status === 'False')) {
    await events.record(resource, 'Warning', REASONS.ChecksFailing, `${healthy.message} (run ${status.lastRunId})`, `${status.lastRunId}/${[...next].sort().join(',')}`);
  }
  if (healthy.status === 'True' && before?.status === 'False') {
    await events.record(resource, 'Normal', REASONS.ChecksPassing, `${healthy.message} again`, status.lastRunId);
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
/** The CRD keeps at most this many failing checks per page (the run has them all), and a condition message this long. */
const MAX_STATUS_FAILURES = 20;
const MAX_MESSAGE_LENGTH = 32768;

type Failure = NonNullable<NonNullable<ManagedMonitor['lastRun']>['pages'][number]['verdict']>['failures'][number];

/** A failure as the status keeps it: measured and bound as text (the CRD's schema has one type per field). */
function statusFailure({ check, measured, bound, message }: Failure) {
  return {
    check,
    ...(measured !== null ? { measured: String(measured) } : {}),
    bound: Array.isArray(bound) ? bound.join(', ') : String(bound),
    message: message.slice(0, 2048),
  };
}

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
            ...(result.verdict?.failing ? { failingChecks: result.verdict.failures.slice(0, MAX_STATUS_FAILURES).map(statusFailure) } : {}),
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

/**
 * Healthy: whether every page with checks or steps passed them in the last run. A journey that went
 * through is passing; one that stopped fails the page's verdict, naming the step (issue #41). A page
 * whose capture failed otherwise in that run has no verdict (RunFailed says why); Unknown until a
 * run has judged a page's checks.
 */
function healthyCondition(monitor: ManagedMonitor, generation: number): Omit<Condition, 'lastTransitionTime'> {
  const unknown = (reason: typeof REASONS.NotRunYet | typeof REASONS.NoChecks, message: string) => ({ type: 'Healthy', status: 'Unknown' as const, reason, message, observedGeneration: generation });
  const checked = new Set(monitor.pages.filter((page) => page.checks !== undefined || page.steps !== undefined).map((page) => page.name));
  if (checked.size === 0) return unknown(REASONS.NoChecks, 'No page declares checks or steps');
  const run = monitor.lastRun;
  // An API older than checks answers no verdict at all: judged by nothing, as null.
  const judged = (run?.pages ?? []).filter((page) => checked.has(page.page) && ((page.verdict !== null && page.verdict !== undefined) || (page.journey !== null && page.journey !== undefined)));
  if (!run || judged.length === 0) {
    const notCaptured = (run?.pages ?? []).filter((page) => checked.has(page.page) && page.outcome === 'failed').map((page) => page.page);
    return unknown(REASONS.NotRunYet, notCaptured.length > 0 ? `The last run could not capture ${notCaptured.join(', ')}: no check was judged` : 'No run has judged the checks yet');
  }
  const failing = judged.filter((page) => page.verdict?.failing);
  if (failing.length === 0) {
    return { type: 'Healthy', status: 'True', reason: REASONS.ChecksPassing, message: `Every page passes its checks (${judged.map((page) => page.page).join(', ')})`, observedGeneration: generation };
  }
  const message = failing.map((page) => `${page.page}: ${(page.verdict?.failures ?? []).map((failure) => `${failure.check} (${failure.message})`).join(', ')}`).join('; ');
  return { type: 'Healthy', status: 'False', reason: REASONS.ChecksFailing, message: message.slice(0, MAX_MESSAGE_LENGTH), observedGeneration: generation };
}
