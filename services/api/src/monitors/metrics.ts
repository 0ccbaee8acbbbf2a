/**
 * Page monitors' metrics, in the API's registry. Labels name the monitor (`namespace`: its
 * Kubernetes namespace, or its account for a monitor made through the management API; `name`) and
 * the page: bounded by what is declared (at most 20 pages a monitor).
 *
 * The state gauges (last diff ratio, last run, consecutive failures...) are read from the store at
 * scrape time through the source the scheduler registers, so that every API replica reports the
 * same values whichever replica ran the run; the alert rules aggregate them with max by. The runs
 * counter and the duration histogram count what this replica ran, and are summed.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { PAGE_OUTCOMES, type PageOutcome } from '../../../../lib/store/monitors.ts';
import { apiRegistry } from '../metrics.ts';

export interface MonitorLabels {
  namespace: string;
  name: string;
}

/** One monitor as the gauges report it. */
export interface MonitorMetricsState extends MonitorLabels {
  /** Seconds between two scheduled runs (the next two from now); undefined while suspended. */
  intervalSeconds?: number;
  /**
   * Unix seconds of the end of the last run, or of when the schedule last (re)started (created,
   * resumed, schedule changed) if that is later: what "has not run for twice its interval" is measured from.
   */
  lastRunTime: number;
  /** Runs in a row, up to the last, in which at least one page failed. */
  consecutiveFailedRuns: number;
  pages: Array<{
    page: string;
    threshold: number;
    /** Undefined until the page has been compared once. */
    diffRatio?: number;
    lastRunTime?: number;
    lastOutcome?: PageOutcome;
  }>;
}

export type MonitorMetricsSource = () => Promise<MonitorMetricsState[]>;

let source: MonitorMetricsSource | undefined;

/** The scheduler's view of the store; the gauges are empty until one is set (and after `undefined`). */
export function setMonitorMetricsSource(next: MonitorMetricsSource | undefined): void {
  source = next;
}

/** One read of the source per scrape, shared by every gauge's collect(). */
let pendingRead: Promise<MonitorMetricsState[]> | undefined;
function readState(): Promise<MonitorMetricsState[]> {
  if (!source) return Promise.resolve([]);
  // A store that is down (or closed) leaves the series out of this scrape instead of failing /metrics.
  pendingRead ??= source().catch(() => []).finally(() => setImmediate(() => (pendingRead = undefined)));
  return pendingRead;
}

const MONITOR_LABELS = ['namespace', 'name'] as const;
const PAGE_LABELS = ['namespace', 'name', 'page'] as const;

function stateGauge<L extends string>(name: string, help: string, labelNames: readonly L[], fill: (gauge: Gauge<L>, state: MonitorMetricsState[]) => void): Gauge<L> {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [apiRegistry],
    async collect() {
      this.reset();
      fill(this, await readState());
    },
  });
}

stateGauge('viewfinder_monitor_page_diff_ratio', "The share of a page's pixels that differed from its baseline in its last run (0 to 1).", PAGE_LABELS, (gauge, state) => {
  for (const monitor of state) for (const page of monitor.pages) if (page.diffRatio !== undefined) gauge.set({ namespace: monitor.namespace, name: monitor.name, page: page.page }, page.diffRatio);
});

stateGauge('viewfinder_monitor_page_diff_threshold', 'The diff ratio beyond which a page counts as changed (the monitor\'s compare.threshold).', PAGE_LABELS, (gauge, state) => {
  for (const monitor of state) for (const page of monitor.pages) gauge.set({ namespace: monitor.namespace, name: monitor.name, page: page.page }, page.threshold);
});

stateGauge('viewfinder_monitor_page_last_run_timestamp_seconds', "Unix time of the end of a page's last run.", PAGE_LABELS, (gauge, state) => {
  for (const monitor of state) for (const page of monitor.pages) if (page.lastRunTime !== undefined) gauge.set({ namespace: monitor.namespace, name: monitor.name, page: page.page }, page.lastRunTime);
});

stateGauge('viewfinder_monitor_page_last_run_success', "1 when a page's last run took its picture and compared it, 0 when it failed.", PAGE_LABELS, (gauge, state) => {
  for (const monitor of state) {
    for (const page of monitor.pages) {
      if (page.lastOutcome !== undefined) gauge.set({ namespace: monitor.namespace, name: monitor.name, page: page.page }, page.lastOutcome === 'failed' ? 0 : 1);
    }
  }
});

stateGauge(
  'viewfinder_monitor_last_run_timestamp_seconds',
  "Unix time of the end of a monitor's last run, or of when its schedule last (re)started (created, resumed, changed) if later.",
  MONITOR_LABELS,
  (gauge, state) => {
    for (const monitor of state) gauge.set({ namespace: monitor.namespace, name: monitor.name }, monitor.lastRunTime);
  },
);

stateGauge('viewfinder_monitor_interval_seconds', "Seconds between two scheduled runs of a monitor; absent while it is suspended.", MONITOR_LABELS, (gauge, state) => {
  for (const monitor of state) if (monitor.intervalSeconds !== undefined) gauge.set({ namespace: monitor.namespace, name: monitor.name }, monitor.intervalSeconds);
});

stateGauge('viewfinder_monitor_consecutive_failed_runs', 'Runs in a row, up to the last, in which at least one page of the monitor failed.', MONITOR_LABELS, (gauge, state) => {
  for (const monitor of state) gauge.set({ namespace: monitor.namespace, name: monitor.name }, monitor.consecutiveFailedRuns);
});

const pageRuns = new Counter({
  name: 'viewfinder_monitor_page_runs_total',
  help: 'Page runs this API replica ran, by outcome: unchanged, changed, baseline (the first picture) or failed.',
  labelNames: [...PAGE_LABELS, 'outcome'] as const,
  registers: [apiRegistry],
});

const runDuration = new Histogram({
  name: 'viewfinder_monitor_run_duration_seconds',
  help: 'Time a monitor run took on this API replica, from its start to the last page compared.',
  labelNames: MONITOR_LABELS,
  buckets: [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600],
  registers: [apiRegistry],
});

export function recordPageRun(labels: MonitorLabels & { page: string }, outcome: PageOutcome): void {
  pageRuns.inc({ ...labels, outcome });
}

export function recordRunDuration(labels: MonitorLabels, seconds: number): void {
  runDuration.observe(labels, seconds);
}

/** A deleted monitor's series go with it (the state gauges follow the store by themselves). */
export function forgetMonitor(labels: MonitorLabels, pages: string[]): void {
  for (const page of pages) for (const outcome of PAGE_OUTCOMES) pageRuns.remove({ ...labels, page, outcome });
  runDuration.remove(labels);
}
