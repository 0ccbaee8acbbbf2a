/**
 * One run of a monitor: each page captured with freezeMotion through the API's renderer (within the
 * monitors' share of slots), compared with its baseline in a worker thread, and the outcome recorded
 * as one MonitorRun; then the history is pruned to historyLimit with the pictures no one names any more.
 *
 * Every capture asks for the page report (issue #40) in the same visit: each run records what the
 * page did, with or without checks, and the page's checks are judged against it here. axe runs only
 * for a page whose checks declare maxViolations. The pixel outcome is judged apart: a changed page
 * and a failing page are different outcomes.
 *
 * A page's journey (steps) runs in the same visit, its fill steps' valueFrom resolved from the page's
 * credentials.values here and nowhere else: the run keeps each step's report, never a value. A journey
 * that stops at a step fails the page (a verdict naming the step) with the picture of that moment.
 */
import { domainRefusal, hostMatches, hostOfUrl } from '../../../../lib/domains.ts';
import { JourneyFailed } from '../../../../lib/errors.ts';
import type { Logger } from '../../../../lib/logger.ts';
import type { Monitor, MonitorJourneyResult, MonitorPage, MonitorPageResult, MonitorRun } from '../../../../lib/store/monitors.ts';
import { monitorScope } from '../../../../lib/store/monitors.ts';
import type { Site, Store } from '../../../../lib/store/store.ts';
import { PROFILES } from '../../../renderer/src/capture/profiles.ts';
import { resolveCredentials } from '../../../renderer/src/capture/journey-steps.ts';
import type { StepReport } from '../../../renderer/src/capture/journey.ts';
import type { CaptureRequest, CaptureResult, Renderer } from '../../../renderer/src/renderer.ts';
import { evaluateChecks, reportRequestFor, type Verdict } from './checks.ts';
import { reportForStorage } from './stored-report.ts';
import { diffPngs } from './diff/diff.ts';
import type { MonitorImages } from './images.ts';
import { recordPageRun, recordRunDuration } from './metrics.ts';
import type { MonitorSlots } from './slots.ts';

export interface RunDeps {
  store: Store;
  renderer: Renderer;
  images: MonitorImages;
  slots: MonitorSlots;
  logger: Logger;
}

export interface RunRequest {
  /** The run's id, from its job: a retried job records its run once. */
  runId?: string;
  trigger: MonitorRun['trigger'];
  scheduledAt: Date;
  signal?: AbortSignal;
}

export async function runMonitor(deps: RunDeps, monitor: Monitor, request: RunRequest): Promise<MonitorRun> {
  const startedAt = new Date();
  const labels = { namespace: monitorScope(monitor), name: monitor.name };
  const site = monitor.siteId === null ? null : await deps.store.getSite(monitor.siteId);
  const pages: MonitorPageResult[] = [];
  for (const page of monitor.pages) {
    request.signal?.throwIfAborted();
    const result = await runPage(deps, monitor, site, page, request.signal);
    recordPageRun({ ...labels, page: page.name }, result.outcome);
    pages.push(result);
  }
  // A replica that lost its lease meanwhile (another one runs this job now) records nothing.
  request.signal?.throwIfAborted();
  const recorded = request.runId === undefined ? null : await deps.store.getMonitorRun(request.runId);
  if (recorded) return discardAttempt(deps, monitor.id, recorded, pages);
  const run = await deps.store.recordMonitorRun({
    ...(request.runId === undefined ? {} : { id: request.runId }),
    monitorId: monitor.id,
    trigger: request.trigger,
    scheduledAt: request.scheduledAt,
    startedAt,
    finishedAt: new Date(),
    pages,
  });
  recordRunDuration(labels, (run.finishedAt.getTime() - startedAt.getTime()) / 1000);
  await pruneHistory(deps, monitor.id);
  return run;
}

/**
 * The capture a page asks for: always PNG, motion frozen, the site's domains when it has a site, and
 * the page report with what the page's checks need (axe for maxViolations, text for text checks),
 * and the journey with every fill's valueFrom replaced by the page's named value.
 */
export function captureRequestOf(page: MonitorPage, site: Site | null): CaptureRequest {
  const { name: _name, ignoreRegions: _ignored, checks, url, quality, fullPage, removeAds, credentials, steps, ...options } = page;
  const { values, ...sent } = credentials ?? {};
  return {
    url,
    quality: quality ?? 'standard',
    fullPage: fullPage ?? false,
    removeAds: removeAds ?? true,
    ...options,
    ...sent,
    ...(steps ? { steps: resolveCredentials(steps, values) } : {}),
    freezeMotion: true,
    report: reportRequestFor(checks),
    ...(site ? { allowedDomains: site.allowedDomains } : {}),
  };
}

async function runPage(deps: RunDeps, monitor: Monitor, site: Site | null, page: MonitorPage, signal?: AbortSignal): Promise<MonitorPageResult> {
  const failed = (error: string): MonitorPageResult => ({
    page: page.name,
    outcome: 'failed',
    diffRatio: null,
    regions: [],
    captureImageId: null,
    diffImageId: null,
    baselineImageId: monitor.baselines[page.name] ?? null,
    error,
    report: null,
    verdict: null,
    journey: null,
  });
  if (monitor.siteId !== null && site === null) return failed(`Site ${monitor.siteId} no longer exists`);
  if (site) {
    const host = hostOfUrl(page.url);
    if (host === undefined || !hostMatches(host, site.allowedDomains)) return failed(domainRefusal(host, undefined, site.id));
  }
  // Usage counts a monitor's captures as /api/screenshot's: for its site, if any, and for the
  // monitor instead of a key. They take nothing from any key's rate limit: MONITOR_SLOT_SHARE bounds them.
  const recordUsage = (outcome: 'capture' | 'failure', bytes: number) =>
    deps.store
      .recordUsage({ accountId: monitor.accountId, siteId: monitor.siteId, monitorId: monitor.id, outcome, bytes })
      .catch((err: unknown) => deps.logger.error({ err, monitorId: monitor.id }, 'Failed to record usage'));
  let captured: CaptureResult;
  try {
    captured = await captureInSlot(deps, captureRequestOf(page, site), signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    await recordUsage('failure', 0);
    if (err instanceof JourneyFailed) return { ...failed(err.message), ...(await journeyFailure(deps, err)) };
    return failed((err as Error).message);
  }
  const { image } = captured;
  await recordUsage('capture', image.length);
  // A renderer that predates reports (a rolling upgrade) answers none: nothing to judge, verdict null.
  const report = captured.report ?? null;
  const verdict = page.checks !== undefined && report !== null ? evaluateChecks(report, page.checks) : null;
  const journey = captured.journey ? { steps: captured.journey.steps } : null;
  const judged = { report: report === null ? null : reportForStorage(report), verdict, journey };
  const captureImageId = await deps.images.put(image);
  const baselineImageId = monitor.baselines[page.name] ?? null;
  const baseline = baselineImageId === null ? null : await deps.images.get(baselineImageId);
  if (baseline === null) {
    await deps.store.setMonitorBaseline(monitor.id, page.name, captureImageId);
    return { page: page.name, outcome: 'baseline', diffRatio: null, regions: [], captureImageId, diffImageId: null, baselineImageId: captureImageId, error: null, ...judged };
  }
  try {
    const diff = await diffPngs(baseline, image, {
      pixelTolerance: monitor.compare.pixelTolerance,
      ignoreRegions: page.ignoreRegions ?? [],
      deviceScaleFactor: PROFILES[page.quality ?? 'standard'].viewport.deviceScaleFactor,
    });
    const diffImageId = await deps.images.put(Buffer.from(diff.diffPng));
    if (monitor.compare.baseline === 'previous') await deps.store.setMonitorBaseline(monitor.id, page.name, captureImageId);
    const outcome = diff.ratio > monitor.compare.threshold ? 'changed' : 'unchanged';
    return { page: page.name, outcome, diffRatio: diff.ratio, regions: diff.regions, captureImageId, diffImageId, baselineImageId, error: null, ...judged };
  } catch (err) {
    // The visit happened: its report and verdict stand, only the pixels could not be judged.
    return { ...failed(`The comparison failed: ${(err as Error).message}`), captureImageId, ...judged };
  }
}

/**
 * A journey that stopped at a step: its report, the picture of that moment (kept as the run's other
 * pictures are), and a failing verdict naming the step, so that the page reads as failing (Healthy,
 * checks metrics, the dashboard) and not merely as a capture that did not happen. The renderer's
 * message names the step and why, never a value typed.
 */
export async function journeyFailure(deps: Pick<RunDeps, 'images'>, err: JourneyFailed): Promise<Pick<MonitorPageResult, 'journey' | 'verdict'>> {
  const { steps, failedStep } = err.journey as { steps: StepReport[]; failedStep?: number };
  const picture = err.image?.startsWith(PNG_DATA_URI) ? Buffer.from(err.image.slice(PNG_DATA_URI.length), 'base64') : undefined;
  const failureImageId = picture && picture.length > 0 ? await deps.images.put(picture) : undefined;
  const journey: MonitorJourneyResult = { steps, ...(failedStep !== undefined ? { failedStep } : {}), ...(failureImageId ? { failureImageId } : {}) };
  const step = failedStep === undefined ? undefined : steps[failedStep];
  const verdict: Verdict = {
    failing: true,
    failures: [{ check: `steps[${failedStep ?? '?'}]`, measured: step?.reason ?? 'failed', bound: 'ok', message: err.message }],
    passed: [],
  };
  return { journey, verdict };
}

const PNG_DATA_URI = 'data:image/png;base64,';

/**
 * Captures in a monitor slot (slots.ts). A capture that clients preempt is dropped and taken again
 * in the next quiet moment: the monitor pays for it, never the clients.
 */
async function captureInSlot(deps: Pick<RunDeps, 'renderer' | 'slots'>, request: CaptureRequest, signal: AbortSignal | undefined): Promise<CaptureResult> {
  const since = Date.now();
  for (;;) {
    const slot = await deps.slots.acquire(signal, since);
    try {
      return await deps.renderer.capture(request, { signal: signal ? AbortSignal.any([signal, slot.preempted]) : slot.preempted });
    } catch (err) {
      if (!slot.preempted.aborted || signal?.aborted) throw err;
    } finally {
      slot.release();
    }
  }
}

/** Another attempt recorded this run first: this attempt's pictures go, unless one became a baseline. */
async function discardAttempt(deps: Pick<RunDeps, 'store' | 'images'>, monitorId: string, recorded: MonitorRun, pages: MonitorPageResult[]): Promise<MonitorRun> {
  const baselines = Object.values((await deps.store.getMonitor(monitorId))?.baselines ?? {});
  const kept = new Set([...imagesOf(recorded), ...baselines]);
  await deps.images.delete(imagesOf({ pages }).filter((id) => !kept.has(id)));
  return recorded;
}

/** Image ids a run names. */
export function imagesOf(run: Pick<MonitorRun, 'pages'>): string[] {
  return run.pages
    .flatMap((page) => [page.captureImageId, page.diffImageId, page.baselineImageId, page.journey?.failureImageId ?? null])
    .filter((id): id is string => id !== null);
}

/** Keeps the newest historyLimit runs; deletes the older ones and the pictures only they named. */
export async function pruneHistory(deps: Pick<RunDeps, 'store' | 'images'>, monitorId: string): Promise<void> {
  const monitor = await deps.store.getMonitor(monitorId);
  if (!monitor) return;
  const runs = await deps.store.listMonitorRuns(monitorId, monitor.historyLimit + 100);
  const stale = runs.slice(monitor.historyLimit);
  if (stale.length === 0) return;
  const kept = new Set([...runs.slice(0, monitor.historyLimit).flatMap(imagesOf), ...Object.values(monitor.baselines)]);
  await deps.store.deleteMonitorRuns(stale.map((run) => run.id));
  await deps.images.delete([...new Set(stale.flatMap(imagesOf))].filter((id) => !kept.has(id)));
}
