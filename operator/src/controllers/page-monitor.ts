import type { ManagedMonitor, PutManagedMonitor } from '../../../lib/operator-api.ts';
import { REASONS, withReady } from '../conditions.ts';
import type { Condition, PageMonitorResource } from '../resources.ts';
import { NotReady, apiCall, readyState, reconcileResource, requireAccount, writeStatus, type ControllerDeps, type ReconcileResult } from './common.ts';

/**
 * The PageMonitor controller: the resource becomes a monitor in the API (managedBy), which owns the
 * schedule and runs it; each reconcile (on a change, and every status interval) mirrors the last run
 * back: per-page status, lastRunTime, nextRunTime, the largest diff, the Ready and Changed conditions
 * (with observedGeneration), and events for a new run: PageChanged and RunFailed (Warning), and
 * BaselineAccepted when a page's accepted baseline was replaced.
 */
export function reconcilePageMonitor(deps: ControllerDeps, namespace: string, name: string): Promise<ReconcileResult> {
  const { kube, api, logger, events } = deps;
  const object = `${namespace}/${name}`;
  return reconcileResource<PageMonitorResource>(deps, 'PageMonitor', namespace, name, {
    async removeFromStore() {
      const monitorId = await api.deleteMonitor(namespace, name);
      if (monitorId) logger.info({ kind: 'PageMonitor', object, monitorId }, 'Deleted the monitor, its runs and pictures');
    },
    async apply(resource, now) {
      const { spec } = resource;
      let accountId: string;
      let siteId: string | undefined;
      if (spec.siteRef !== undefined) {
        const site = await apiCall(() => api.getSite(namespace, spec.siteRef as string));
        if (!site) throw new NotReady(REASONS.SiteNotFound, `Site ${namespace}/${spec.siteRef} is not reconciled into the API (yet)`);
        accountId = site.accountId;
        siteId = site.id;
      } else {
        accountId = spec.account as string;
        await requireAccount(api, accountId);
      }
      const wanted: PutManagedMonitor = {
        accountId,
        uid: resource.metadata.uid,
        ...(siteId ? { siteId } : {}),
        schedule: spec.schedule,
        ...(spec.timeZone !== undefined ? { timeZone: spec.timeZone } : {}),
        ...(spec.suspend !== undefined ? { suspend: spec.suspend } : {}),
        ...(spec.historyLimit !== undefined ? { historyLimit: spec.historyLimit } : {}),
        ...(spec.compare !== undefined ? { compare: spec.compare } : {}),
        pages: spec.pages,
      };
      const monitor = await apiCall(() => api.putMonitor(namespace, name, wanted));
      const generation = resource.metadata.generation;
      const previous = resource.status;
      const run = monitor.lastRun;
      const status: NonNullable<PageMonitorResource['status']> = {
        monitorId: monitor.id,
        observedGeneration: generation,
        ...(monitor.nextRunAt ? { nextRunTime: monitor.nextRunAt } : {}),
        ...(run ? { lastRunTime: run.finishedAt, largestDiffRatio: Math.max(0, ...run.pages.map((page) => page.diffRatio ?? 0)) } : {}),
        pages: pageStatuses(monitor),
        conditions: withCondition(
          withReady(previous?.conditions, readyState(`Monitor ${monitor.id} runs on "${monitor.schedule}"`), generation, now),
          changedCondition(monitor, generation),
          now,
        ),
      };
      if (run && run.finishedAt !== previous?.lastRunTime) {
        for (const page of run.pages) {
          if (page.outcome === 'changed') {
            await events.record(resource, 'Warning', REASONS.PageChanged, `Page ${page.page} changed: ${percent(page.diffRatio ?? 0)} of its pixels differ from the baseline (threshold ${percent(monitor.compare.threshold)})`);
          }
          if (page.outcome === 'failed') await events.record(resource, 'Warning', REASONS.RunFailed, `Page ${page.page} failed: ${page.error ?? 'no picture'}`);
        }
      }
      if (monitor.compare.baseline === 'accepted') {
        for (const page of status.pages ?? []) {
          const before = previous?.pages?.find((candidate) => candidate.name === page.name)?.baselineCaptureId;
          if (before && page.baselineCaptureId && before !== page.baselineCaptureId) {
            await events.record(resource, 'Normal', REASONS.BaselineAccepted, `Page ${page.name}: a new baseline was accepted (${page.baselineCaptureId})`);
          }
        }
      }
      await writeStatus(kube, resource, status);
    },
  });
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(2)} %`;
}

function pageStatuses(monitor: ManagedMonitor): NonNullable<NonNullable<PageMonitorResource['status']>['pages']> {
  return monitor.pages.map(({ name }) => {
    const result = monitor.lastRun?.pages.find((page) => page.page === name);
    const baseline = monitor.baselines[name];
    return {
      name,
      ...(baseline ? { baselineCaptureId: baseline } : {}),
      ...(result && monitor.lastRun
        ? {
            lastRunTime: monitor.lastRun.finishedAt,
            changed: result.outcome === 'changed',
            ...(result.diffRatio !== null ? { diffRatio: result.diffRatio } : {}),
            ...(result.captureImageId ? { lastCaptureId: result.captureImageId } : {}),
            ...(result.error ? { lastError: result.error } : {}),
            regions: result.regions.slice(0, 50),
          }
        : {}),
    };
  });
}

function changedCondition(monitor: ManagedMonitor, generation: number): Omit<Condition, 'lastTransitionTime'> {
  const run = monitor.lastRun;
  if (!run) return { type: 'Changed', status: 'Unknown', reason: REASONS.NotRunYet, message: 'No run has finished yet', observedGeneration: generation };
  const changed = run.pages.filter((page) => page.outcome === 'changed');
  return changed.length > 0
    ? {
        type: 'Changed',
        status: 'True',
        reason: REASONS.PageChanged,
        message: changed.map((page) => `${page.page}: ${percent(page.diffRatio ?? 0)}`).join(', '),
        observedGeneration: generation,
      }
    : { type: 'Changed', status: 'False', reason: REASONS.NoChange, message: `No page changed beyond ${percent(monitor.compare.threshold)} in the run of ${run.finishedAt}`, observedGeneration: generation };
}

/** Sets a condition; lastTransitionTime moves only when its status flips. */
function withCondition(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition[] {
  const previous = conditions.find((condition) => condition.type === next.type);
  const lastTransitionTime = previous && previous.status === next.status ? previous.lastTransitionTime : now.toISOString();
  return [...conditions.filter((condition) => condition.type !== next.type), { ...next, lastTransitionTime }];
}
