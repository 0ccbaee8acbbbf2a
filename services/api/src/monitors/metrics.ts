/**
 * Page monitors' metrics, in the API's registry. Labels name the monitor (`namespace`: its
 * Kubernetes namespace, or its account for a monitor made through the management API; `name`) and
 * the page: bounded by what is declared (at most 20 pages a monitor).
 *
 * The state gauges (last diff ratio, last run, consecutive failures...) are read from the store at
 * scrape time through the source the scheduler registers, so that every API replica reports the
 * same values whichever replica ran the run; the alert rules aggregate them with max by. The runs
 * counter and the duration histogram count what this replica ran, and are summed.
 *
 * The checks' gauges (issue #40) read each page's last report and verdict. Their extra labels are
 * fixed sets: `vital` one of LCP, CLS, FCP, TTFB, TBT; `impact` one of critical, serious, moderate,
 * minor. A monitor has at most 20 pages, so a monitor has at most 20 x 5 series of a vital gauge.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { PAGE_OUTCOMES, type MonitorPage, type MonitorPageResult, type PageOutcome } from '../../../../lib/store/monitors.ts';
import type { PageReport } from '../../../renderer/src/report/page-report.ts';
import { WEB_VITAL_NAMES, type WebVitalName } from '../../../renderer/src/report/page-report.ts';
import { apiRegistry } from '../metrics.ts';
import { AXE_IMPACTS, type AxeImpact } from './checks.ts';

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
    /** What the page's last report measured; undefined until a run has a report of it. */
    report?: PageReportMetrics;
    /** Checks that failed in the page's last verdict (0: passing); undefined without checks or a verdict. */
    checksFailing?: number;
    /**
     * Each Web Vital with a declared bound: the runs in a row, up to the last, in which it was over
     * the bound (0 when the last run was within it).
     */
    vitalRunsOverBound?: Partial<Record<WebVitalName, number>>;
  }>;
}

/** A page report's numbers, in the report's units: ms for LCP, FCP, TTFB and TBT; CLS is a score. */
export interface PageReportMetrics {
  /** Only the vitals that were measured (a page with no contentful paint has no LCP). */
  vitals: Partial<Record<WebVitalName, number>>;
  consoleErrors: number;
  failedRequests: number;
  /** Elements violating axe rules, per impact; undefined when axe did not run (no maxViolations) or failed. */
  axeViolations?: Record<AxeImpact, number>;
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

/**
 * A page's checks' metrics from its results, newest first: the last report's numbers, the last
 * verdict's failures (a journey that stopped is one), and for each vital with a declared bound, the runs in a row over it (a run
 * without a verdict, a failed capture, ends the row).
 */
export function pageCheckMetrics(page: Pick<MonitorPage, 'checks' | 'steps'>, results: MonitorPageResult[]): Pick<MonitorMetricsState['pages'][number], 'report' | 'checksFailing' | 'vitalRunsOverBound'> {
  const last = results[0];
  const metrics: ReturnType<typeof pageCheckMetrics> = {};
  if (last?.report) metrics.report = reportMetrics(last.report);
  // A journey is a check of its own (issue #41): a page with steps has the series too, 0 once its journey went through.
  if ((page.checks !== undefined || page.steps !== undefined) && last?.verdict) metrics.checksFailing = last.verdict.failures.length;
  else if (page.steps !== undefined && last?.journey) metrics.checksFailing = 0;
  const bounded = WEB_VITAL_NAMES.filter((vital) => page.checks?.webVitals?.[vital] !== undefined);
  if (bounded.length > 0 && last?.verdict) {
    metrics.vitalRunsOverBound = Object.fromEntries(
      bounded.map((vital) => {
        const streak = results.findIndex((result) => !result.verdict?.failures.some((failure) => failure.check === `webVitals.${vital}`));
        return [vital, streak === -1 ? results.length : streak];
      }),
    );
  }
  return metrics;
}

function reportMetrics(report: PageReport): PageReportMetrics {
  const vitals = Object.fromEntries(WEB_VITAL_NAMES.flatMap((vital) => (report.vitals[vital].value === null ? [] : [[vital, report.vitals[vital].value]])));
  const metrics: PageReportMetrics = { vitals, consoleErrors: report.console.errors.total, failedRequests: report.failedRequests.total };
  const audit = report.accessibility;
  if (audit && 'violations' in audit) {
    // Elements, as maxViolations counts them, of the rules kept in the report (its first MAX_AXE_VIOLATIONS).
    const byImpact = Object.fromEntries(AXE_IMPACTS.map((impact) => [impact, 0])) as Record<AxeImpact, number>;
    for (const violation of audit.violations.items) if (violation.impact !== null) byImpact[violation.impact] += violation.count;
    metrics.axeViolations = byImpact;
  }
  return metrics;
}

const VITAL_LABELS = [...PAGE_LABELS, 'vital'] as const;
const IMPACT_LABELS = [...PAGE_LABELS, 'impact'] as const;
const pageLabels = (monitor: MonitorMetricsState, page: MonitorMetricsState['pages'][number]) => ({ namespace: monitor.namespace, name: monitor.name, page: page.page });

stateGauge('viewfinder_monitor_page_checks_failing', "Checks a page failed in its last run, a journey stopped at a step counting as one (0: all passing); absent for a page without checks or steps.", PAGE_LABELS, (gauge, state) => {
  for (const monitor of state) for (const page of monitor.pages) if (page.checksFailing !== undefined) gauge.set(pageLabels(monitor, page), page.checksFailing);
});

stateGauge(
  'viewfinder_monitor_page_web_vital',
  "A Web Vital of a page's last run, in the report's units: milliseconds for LCP, FCP, TTFB and TBT, a score for CLS; absent when not measured.",
  VITAL_LABELS,
  (gauge, state) => {
    for (const monitor of state) {
      for (const page of monitor.pages) {
        for (const vital of WEB_VITAL_NAMES) {
          const value = page.report?.vitals[vital];
          if (value !== undefined) gauge.set({ ...pageLabels(monitor, page), vital }, value);
        }
      }
    }
  },
);

stateGauge('viewfinder_monitor_page_console_errors', "Console errors and uncaught exceptions of a page's last run (CSP report-only and the browser's own messages not counted).", PAGE_LABELS, (gauge, state) => {
  for (const monitor of state) for (const page of monitor.pages) if (page.report) gauge.set(pageLabels(monitor, page), page.report.consoleErrors);
});

stateGauge('viewfinder_monitor_page_failed_requests', "Requests of a page's last run that failed: HTTP 4xx/5xx, network errors, refused.", PAGE_LABELS, (gauge, state) => {
  for (const monitor of state) for (const page of monitor.pages) if (page.report) gauge.set(pageLabels(monitor, page), page.report.failedRequests);
});

stateGauge(
  'viewfinder_monitor_page_axe_violations',
  "Elements of a page violating axe-core rules in its last run, by the rules' impact; only for pages whose checks declare maxViolations.",
  IMPACT_LABELS,
  (gauge, state) => {
    for (const monitor of state) {
      for (const page of monitor.pages) {
        const violations = page.report?.axeViolations;
        if (violations) for (const impact of AXE_IMPACTS) gauge.set({ ...pageLabels(monitor, page), impact }, violations[impact]);
      }
    }
  },
);

stateGauge(
  'viewfinder_monitor_page_web_vital_over_bound',
  "1 when a page's last run measured a Web Vital over the bound its checks declare, 0 within it; only vitals with a bound.",
  VITAL_LABELS,
  (gauge, state) => {
    for (const monitor of state) {
      for (const page of monitor.pages) {
        for (const [vital, runs] of Object.entries(page.vitalRunsOverBound ?? {})) gauge.set({ ...pageLabels(monitor, page), vital }, runs > 0 ? 1 : 0);
      }
    }
  },
);

stateGauge(
  'viewfinder_monitor_page_web_vital_over_bound_runs',
  "Runs in a row, up to a page's last, that measured a Web Vital over its declared bound (of the last 20 runs); only vitals with a bound.",
  VITAL_LABELS,
  (gauge, state) => {
    for (const monitor of state) {
      for (const page of monitor.pages) {
        for (const [vital, runs] of Object.entries(page.vitalRunsOverBound ?? {})) gauge.set({ ...pageLabels(monitor, page), vital }, runs);
      }
    }
  },
);

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
