import { expect } from 'chai';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import { forgetMonitor, recordPageRun, recordRunDuration, setMonitorMetricsSource, type MonitorMetricsState } from '../../../../services/api/src/monitors/metrics.ts';

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
