/**
 * The API owns monitors' schedules. Every replica runs this: a scheduler that, every
 * schedulerIntervalMs, queues the next run of each monitor as a job of the shared job runner, with
 * an idempotency key made of the monitor, its generation and the scheduled time, so that N replicas
 * queue one job per run; the runner's atomic claim makes one replica run it, and a replica that
 * dies mid-run loses only that run (its lease expires and another replica retries it). A queued run
 * of an older generation (the monitor changed since) or of a monitor gone or suspended is skipped.
 */
import { Conflict, NotFound } from '../../../../lib/errors.ts';
import type { JobRunner } from '../../../../lib/jobs/runner.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { monitorScope, type Monitor, type MonitorRun } from '../../../../lib/store/monitors.ts';
import type { Store } from '../../../../lib/store/store.ts';
import type { Renderer } from '../../../renderer/src/renderer.ts';
import type { MonitorsConfig } from './config.ts';
import type { MonitorImages } from './images.ts';
import { forgetMonitor, pageCheckMetrics, setMonitorMetricsSource, type MonitorMetricsState } from './metrics.ts';
import { imagesOf, pruneHistory, runMonitor } from './run.ts';
import { intervalSeconds, nextRunAfter } from './schedule.ts';
import { monitorSlots } from './slots.ts';

export const MONITOR_RUN_JOB = 'monitor-run';

interface RunPayload {
  monitorId: string;
  generation: number;
  scheduledAt: string;
  trigger: MonitorRun['trigger'];
  [key: string]: unknown;
}

export interface MonitorServiceDeps {
  store: Store;
  renderer: Renderer;
  images: MonitorImages;
  runner: JobRunner;
  config: MonitorsConfig;
  logger: Logger;
  /** The scheduler's clock; tests pass their own. */
  now?: () => Date;
}

export interface MonitorService {
  /** Queues a run now and answers its job's id; while one is queued or running, answers that one's. */
  runNow(monitor: Monitor): Promise<string>;
  /** Makes a run's capture of `page` the page's baseline. */
  acceptBaseline(monitor: Monitor, runId: string, page: string): Promise<Monitor>;
  /** Deletes the monitor, its runs and every picture they name. */
  deleteMonitor(monitor: Monitor): Promise<void>;
  /** True when `imageId` is one of the monitor's pictures (a run's or a baseline). */
  ownsImage(monitor: Monitor, imageId: string): Promise<boolean>;
  images: MonitorImages;
  /** Queues due runs once (the scheduler's tick); tests call it directly. */
  tick(): Promise<void>;
  stop(): void;
}

export function startMonitorService(deps: MonitorServiceDeps): MonitorService {
  const { store, runner, images, logger, config } = deps;
  const slots = monitorSlots(deps.renderer, config.slotSharePercent);

  runner.register({
    type: MONITOR_RUN_JOB,
    retry: { maxAttempts: 2, baseDelayMs: 5_000, maxDelayMs: 60_000 },
    retentionMs: 60 * 60 * 1000,
    concurrency: config.runConcurrency,
    async run(job, { signal }) {
      const payload = job.payload as RunPayload;
      const monitor = await store.getMonitor(payload.monitorId);
      if (!monitor) return { result: { skipped: 'the monitor was deleted' } };
      if (monitor.generation !== payload.generation) return { result: { skipped: 'the monitor changed since this run was queued' } };
      if (monitor.suspend && payload.trigger === 'schedule') return { result: { skipped: 'the monitor is suspended' } };
      const run = await runMonitor({ store, renderer: deps.renderer, images, slots, logger }, monitor, {
        runId: `run_${job.id.replace(/^job_/, '')}`,
        trigger: payload.trigger,
        scheduledAt: new Date(payload.scheduledAt),
        signal,
      });
      return { result: { runId: run.id } };
    },
  });

  const enqueue = (monitor: Monitor, scheduledAt: Date, trigger: MonitorRun['trigger'], key: string) =>
    runner.enqueue(MONITOR_RUN_JOB, monitor.accountId, { monitorId: monitor.id, generation: monitor.generation, scheduledAt: scheduledAt.toISOString(), trigger } satisfies RunPayload, {
      runAt: scheduledAt,
      idempotencyKey: key,
    });

  // A monitor created or changed after the previous tick read the monitors, less than a tick before
  // a boundary, was not there to have that boundary queued: this tick queues every boundary since
  // the previous one began (late, but once: the idempotency key), then the next one to come. Never
  // one before the monitor's last change, which its previous generation already ran.
  const clock = deps.now ?? (() => new Date());
  let previousTickAt: Date | undefined;
  async function tick(): Promise<void> {
    const now = clock();
    const since = previousTickAt ?? now;
    previousTickAt = now;
    for (const monitor of await store.listAllMonitors()) {
      if (monitor.suspend) continue;
      let after = new Date(Math.max(since.getTime(), monitor.scheduleStartedAt.getTime(), monitor.updatedAt.getTime()));
      for (let next = nextRunAfter(monitor.schedule, monitor.timeZone, after); next !== null; next = nextRunAfter(monitor.schedule, monitor.timeZone, after)) {
        try {
          await enqueue(monitor, next, 'schedule', `monitor:${monitor.id}:${monitor.generation}:${next.toISOString()}`);
        } catch (err) {
          logger.warn({ err, monitorId: monitor.id }, 'Could not queue a monitor run; trying again at the next tick');
        }
        if (next > now) break;
        after = next;
      }
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const loop = () => {
    if (stopped) return;
    tick()
      .catch((err: unknown) => logger.error({ err }, 'The monitor scheduler could not read the monitors'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, config.schedulerIntervalMs);
      });
  };
  loop();
  const metricsCache = new Map<string, RunsDerived>();
  setMonitorMetricsSource(() => metricsState(store, metricsCache));

  return {
    images,
    tick,
    async runNow(monitor) {
      // At most one pending (queued or running) run-now per monitor. Each run-now's idempotency key
      // names the one before it, so the chain's end is the pending run, or the key of the next one:
      // callers at once (on any replica) compute the same key and get one job.
      let key = `monitor:${monitor.id}:manual`;
      for (let previous = await store.findJobByIdempotencyKey(monitor.accountId, key); previous; previous = await store.findJobByIdempotencyKey(monitor.accountId, key)) {
        if (previous.state === 'queued' || previous.state === 'running') return previous.id;
        key = `monitor:${monitor.id}:manual:after:${previous.id}`;
      }
      const { job } = await enqueue(monitor, new Date(), 'manual', key);
      return job.id;
    },
    async acceptBaseline(monitor, runId, page) {
      const run = await store.getMonitorRun(runId);
      if (!run || run.monitorId !== monitor.id) throw new NotFound(`Run ${runId} not found`);
      const result = run.pages.find((candidate) => candidate.page === page);
      if (!result) throw new NotFound(`Run ${runId} has no page ${page}`);
      if (!monitor.pages.some((candidate) => candidate.name === page)) throw new NotFound(`The monitor has no page ${page} any more`);
      if (result.captureImageId === null) throw new Conflict(`Run ${runId} took no picture of page ${page} (it failed): nothing to accept`);
      const previous = monitor.baselines[page];
      const updated = await store.setMonitorBaseline(monitor.id, page, result.captureImageId);
      if (!updated) throw new NotFound(`Monitor ${monitor.id} not found`);
      // The old baseline goes once no kept run names it.
      if (previous && previous !== result.captureImageId) {
        const runs = await store.listMonitorRuns(monitor.id, monitor.historyLimit);
        if (!runs.some((kept) => imagesOf(kept).includes(previous))) await images.delete([previous]);
      }
      await pruneHistory({ store, images }, monitor.id);
      return updated;
    },
    async deleteMonitor(monitor) {
      const runs = await store.listMonitorRuns(monitor.id, 1000);
      await store.deleteMonitor(monitor.id);
      await images.delete([...new Set([...runs.flatMap(imagesOf), ...Object.values(monitor.baselines)])]);
      forgetMonitor({ namespace: monitorScope(monitor), name: monitor.name }, monitor.pages.map((page) => page.name));
    },
    async ownsImage(monitor, imageId) {
      if (Object.values(monitor.baselines).includes(imageId)) return true;
      const runs = await store.listMonitorRuns(monitor.id, monitor.historyLimit + 100);
      return runs.some((run) => imagesOf(run).includes(imageId));
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      setMonitorMetricsSource(undefined);
    },
  };
}

/** What a monitor's metrics derive from its runs, kept until it has a new run or a new spec. */
type RunsDerived = Pick<MonitorMetricsState, 'consecutiveFailedRuns' | 'pages'> & { key: string; lastFinishedAt: number };

/**
 * What the metrics report of every monitor, read from the store (the same on every replica). A
 * monitor's last 20 runs (with their pages' reports) are read again only when it has a new run or a
 * new spec: a scrape otherwise reads its newest run alone.
 */
async function metricsState(store: Store, cache: Map<string, RunsDerived>): Promise<MonitorMetricsState[]> {
  const now = new Date();
  const monitors = await store.listAllMonitors();
  for (const id of cache.keys()) if (!monitors.some((monitor) => monitor.id === id)) cache.delete(id);
  return Promise.all(
    monitors.map(async (monitor) => {
      const [newest] = await store.listMonitorRuns(monitor.id, 1);
      const key = `${newest?.id ?? ''}:${monitor.generation}`;
      let derived = cache.get(monitor.id);
      if (derived?.key !== key) {
        derived = { key, ...derivedFromRuns(monitor, await store.listMonitorRuns(monitor.id, 20)) };
        cache.set(monitor.id, derived);
      }
      const interval = monitor.suspend ? undefined : intervalSeconds(monitor.schedule, monitor.timeZone, now);
      return {
        namespace: monitorScope(monitor),
        name: monitor.name,
        ...(interval !== undefined ? { intervalSeconds: interval } : {}),
        lastRunTime: Math.max(derived.lastFinishedAt, monitor.scheduleStartedAt.getTime()) / 1000,
        consecutiveFailedRuns: derived.consecutiveFailedRuns,
        pages: derived.pages,
      };
    }),
  );
}

function derivedFromRuns(monitor: Monitor, runs: MonitorRun[]): Omit<RunsDerived, 'key'> {
  const failedInARow = runs.findIndex((run) => !run.pages.some((page) => page.outcome === 'failed'));
  return {
    lastFinishedAt: runs[0]?.finishedAt.getTime() ?? 0,
    consecutiveFailedRuns: failedInARow === -1 ? runs.length : failedInARow,
    pages: monitor.pages.map((page) => {
      const results = runs.flatMap((run) => run.pages.filter((result) => result.page === page.name));
      const lastPage = results[0];
      const lastRun = runs.find((run) => run.pages.some((result) => result.page === page.name));
      return {
        page: page.name,
        threshold: monitor.compare.threshold,
        ...(lastPage?.diffRatio !== null && lastPage?.diffRatio !== undefined ? { diffRatio: lastPage.diffRatio } : {}),
        ...(lastRun ? { lastRunTime: lastRun.finishedAt.getTime() / 1000 } : {}),
        ...(lastPage ? { lastOutcome: lastPage.outcome } : {}),
        ...pageCheckMetrics(page, results),
      };
    }),
  };
}
