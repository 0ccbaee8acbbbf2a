import { expect } from 'chai';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import type { MonitorPageResult } from '../../../../lib/store/monitors.ts';
import { forgetMonitor, pageCheckMetrics, recordPageRun, recordRunDuration, setMonitorMetricsSource, type MonitorMetricsState } from '../../../../services/api/src/monitors/metrics.ts';

/** The monitors' metrics as Prometheus scrapes them from the API's registry. */
describe('monitor metrics', () => {
  const storefront: MonitorMetricsState = {
    namespace: 'shop',
    name: 'storefront',
    intervalSeconds: 300,
    lastRunTime: 1_700_000_000,
    consecutiveFailedRuns: 1,
    pages: [
      { page: 'home', threshold: 0.01, diffRatio: 0.042, lastRunTime: 1_700_000_000, lastOutcome: 'changed' },
      { page: 'pricing', threshold: 0.01, diffRatio: 0, lastRunTime: 1_700_000_000, lastOutcome: 'unchanged' },
      { page: 'checkout', threshold: 0.01, lastRunTime: 1_700_000_000, lastOutcome: 'failed' },
      { page: 'new', threshold: 0.01 },
    ],
  };
  const paused: MonitorMetricsState = { namespace: 'acct_1', name: 'paused', lastRunTime: 1_600_000_000, consecutiveFailedRuns: 0, pages: [{ page: 'home', threshold: 0.5 }] };
  let reads = 0;

  beforeEach(() => {
    reads = 0;
    setMonitorMetricsSource(async () => {
      reads += 1;
      return [storefront, paused];
    });
  });
  after(() => setMonitorMetricsSource(undefined));

  const scrape = () => apiRegistry.metrics();
  const line = (text: string, sample: string) => text.split('\n').find((candidate) => candidate.startsWith(`${sample} `));

  it('reports each page’s last diff ratio, threshold, run time and outcome, read once per scrape', async () => {
    const text = await scrape();
    expect(reads).to.equal(1);
    expect(line(text, 'viewfinder_monitor_page_diff_ratio{namespace="shop",name="storefront",page="home"}')).to.equal('viewfinder_monitor_page_diff_ratio{namespace="shop",name="storefront",page="home"} 0.042');
    expect(line(text, 'viewfinder_monitor_page_diff_ratio{namespace="shop",name="storefront",page="pricing"}')).to.match(/ 0$/);
    expect(text, 'no ratio before a page was compared').to.not.include('viewfinder_monitor_page_diff_ratio{namespace="shop",name="storefront",page="checkout"}');
    expect(line(text, 'viewfinder_monitor_page_diff_threshold{namespace="shop",name="storefront",page="new"}')).to.match(/ 0\.01$/);
    expect(line(text, 'viewfinder_monitor_page_last_run_success{namespace="shop",name="storefront",page="checkout"}')).to.match(/ 0$/);
    expect(line(text, 'viewfinder_monitor_page_last_run_success{namespace="shop",name="storefront",page="home"}')).to.match(/ 1$/);
    expect(line(text, 'viewfinder_monitor_page_last_run_timestamp_seconds{namespace="shop",name="storefront",page="home"}')).to.match(/ 1700000000$/);
  });

  it('reports each monitor’s last run, interval (none while suspended) and failed runs in a row', async () => {
    const text = await scrape();
    expect(line(text, 'viewfinder_monitor_last_run_timestamp_seconds{namespace="shop",name="storefront"}')).to.match(/ 1700000000$/);
    expect(line(text, 'viewfinder_monitor_interval_seconds{namespace="shop",name="storefront"}')).to.match(/ 300$/);
    expect(text).to.not.include('viewfinder_monitor_interval_seconds{namespace="acct_1",name="paused"}');
    expect(line(text, 'viewfinder_monitor_last_run_timestamp_seconds{namespace="acct_1",name="paused"}')).to.match(/ 1600000000$/);
    expect(line(text, 'viewfinder_monitor_consecutive_failed_runs{namespace="shop",name="storefront"}')).to.match(/ 1$/);
  });

  it('follows the store: a monitor gone from the source is gone from the next scrape', async () => {
    setMonitorMetricsSource(async () => [paused]);
    const text = await scrape();
    // The state gauges only: counters of runs this process ran (other test files') stay.
    const stateLines = text.split('\n').filter((candidate) => /^viewfinder_monitor_(page_diff|page_last|last_run|interval|consecutive)/.test(candidate));
    expect(stateLines.filter((candidate) => candidate.includes('name="storefront"'))).to.deep.equal([]);
    expect(stateLines.some((candidate) => candidate.includes('name="paused"'))).to.equal(true);
  });

  it('counts this replica’s page runs by outcome and times its runs; a deleted monitor’s series go', async () => {
    const labels = { namespace: 'shop', name: 'counted' };
    recordPageRun({ ...labels, page: 'home' }, 'changed');
    recordPageRun({ ...labels, page: 'home' }, 'changed');
    recordPageRun({ ...labels, page: 'home' }, 'failed');
    recordRunDuration(labels, 3.2);
    let text = await scrape();
    expect(line(text, 'viewfinder_monitor_page_runs_total{namespace="shop",name="counted",page="home",outcome="changed"}')).to.match(/ 2$/);
    expect(line(text, 'viewfinder_monitor_page_runs_total{namespace="shop",name="counted",page="home",outcome="failed"}')).to.match(/ 1$/);
    expect(line(text, 'viewfinder_monitor_run_duration_seconds_count{namespace="shop",name="counted"}')).to.match(/ 1$/);
    expect(line(text, 'viewfinder_monitor_run_duration_seconds_bucket{le="5",namespace="shop",name="counted"}')).to.match(/ 1$/);
    forgetMonitor(labels, ['home']);
    text = await scrape();
    expect(text).to.not.include('name="counted"');
  });
});

describe("monitor metrics of a page's checks (issue #40)", () => {
  const verdictWith = (...checks: string[]) => ({ failing: checks.length > 0, failures: checks.map((check) => ({ check, measured: 1, bound: 0, message: check })), passed: [] });
  const result = (verdict: ReturnType<typeof verdictWith> | null, report: unknown = null) =>
    ({ page: 'home', outcome: 'unchanged', diffRatio: 0, regions: [], captureImageId: null, diffImageId: null, baselineImageId: null, error: null, report, verdict, journey: null }) as MonitorPageResult;
  const vitals = (values: Record<string, number | null>) => Object.fromEntries(['LCP', 'CLS', 'FCP', 'TTFB', 'TBT'].map((name) => [name, { value: values[name] ?? null, unit: name === 'CLS' ? 'score' : 'ms', rating: null }]));
  const report = {
    vitals: vitals({ LCP: 3100, CLS: 0.02, TTFB: 40 }),
    console: { errors: { total: 3, items: [] } },
    failedRequests: { total: 2, items: [] },
    accessibility: { violations: { total: 2, items: [{ id: 'label', impact: 'critical', help: '', count: 2, targets: [] }, { id: 'region', impact: 'moderate', help: '', count: 5, targets: [] }] } },
  };

  it('reads the last report, the last verdict, and counts the runs in a row over each bounded vital (a run without a verdict ends the row)', () => {
    const checks = { webVitals: { LCP: 'good' as const, CLS: 0.1 }, maxViolations: { serious: 0 } };
    const results = [result(verdictWith('webVitals.LCP'), report), result(verdictWith('webVitals.LCP', 'maxConsoleErrors')), result(null), result(verdictWith('webVitals.LCP'))];
    expect(pageCheckMetrics({ checks }, results)).to.deep.equal({
      report: { vitals: { LCP: 3100, CLS: 0.02, TTFB: 40 }, consoleErrors: 3, failedRequests: 2, axeViolations: { critical: 2, serious: 0, moderate: 5, minor: 0 } },
      checksFailing: 1,
      vitalRunsOverBound: { LCP: 2, CLS: 0 },
    });
  });

  it('gives a page without checks its report numbers only, and a page not yet run nothing', () => {
    const { accessibility: _axe, ...withoutAxe } = report;
    expect(pageCheckMetrics({}, [result(null, withoutAxe)])).to.deep.equal({ report: { vitals: { LCP: 3100, CLS: 0.02, TTFB: 40 }, consoleErrors: 3, failedRequests: 2 } });
    expect(pageCheckMetrics({ checks: { maxConsoleErrors: 0 } }, [])).to.deep.equal({});
  });

  it('counts a journey that stopped as a failing check of a page with steps and no checks, and its journey that went through as 0 (issue #41)', () => {
    const steps = [{ action: 'click' as const, selector: '#go' }];
    const journey = { steps: [{ action: 'click' as const, selector: '#go', status: 'ok' as const, durationMs: 20 }] };
    expect(pageCheckMetrics({ steps }, [{ ...result(null), journey }])).to.deep.equal({ checksFailing: 0 });
    const stopped = { ...result(verdictWith('steps[0]')), outcome: 'failed' as const, journey: { steps: [{ ...journey.steps[0]!, status: 'failed' as const }], failedStep: 0 } };
    expect(pageCheckMetrics({ steps }, [stopped])).to.deep.equal({ checksFailing: 1 });
    expect(pageCheckMetrics({}, [{ ...result(null), journey }]), 'no steps declared (any more): no series').to.deep.equal({});
  });
});
