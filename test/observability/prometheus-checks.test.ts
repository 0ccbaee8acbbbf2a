import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { openSqliteStore } from '../../lib/store/sqlite.ts';
import type { Store } from '../../lib/store/store.ts';
import { expectEventually } from '../support/eventually.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';
import { scrapeEverySecond, startPrometheus, type PrometheusProcess } from '../support/prometheus.ts';

const API_JOB = 'viewfinder-api';

/**
 * Checks on a monitor's page as an SRE sees them (issue #40): a hosted API process and a renderer
 * process (real Chromium) run a monitor of a page this test breaks and fixes (a console error, and a
 * first byte 300 ms late against a TTFB bound of 150 ms), a real Prometheus scrapes the API every
 * second with the chart's rules, and the test reads the series and the alerts through its HTTP API:
 * ViewfinderMonitorPageChecksFailing after its `for`, ViewfinderMonitorWebVitalOverBound at the third
 * run over the bound, and both gone once the page is fixed.
 */
describe('a real Prometheus firing and clearing the checks alerts of a monitored page', function () {
  this.timeout(300_000);
  let server: http.Server;
  let origin: string;
  let broken = true;
  let renderer: ServiceProcess;
  let api: ServiceProcess;
  let prometheus: PrometheusProcess;
  let dataDir: string;
  let store: Store;
  let accountId: string;
  let key: string;
  let monitorId: string;

  const call = async (method: string, route: string) => {
    const response = await fetch(`${api.base}${route}`, { method, headers: { 'x-api-key': key } });
    return { status: response.status, body: (await response.json()) as any };
  };
  const runNow = async () => {
    const before = (await call('GET', `/api/monitors/${monitorId}/runs`)).body.length as number;
    expect((await call('POST', `/api/monitors/${monitorId}/runs`)).status).to.equal(202);
    let runs: Array<{ id: string; pages: Array<{ verdict: { failures: Array<{ check: string }> } }> }> = [];
    await expectEventually(async () => {
      runs = (await call('GET', `/api/monitors/${monitorId}/runs`)).body;
      expect(runs).to.have.length(before + 1);
    }, 90_000);
    return runs[0]!;
  };
  const alerts = async () => (await prometheus.alerts()).filter((alert) => alert.labels.alertname?.startsWith('ViewfinderMonitor'));
  const value = async (query: string) => Number((await prometheus.query(query))[0]?.value[1]);

  before(async () => {
    server = http.createServer((req, res) => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        const script = broken ? "<script>console.error('payment widget failed to load')</script>" : '';
        res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><main><h1>Checkout</h1></main>${script}</body></html>`);
      };
      if (broken) setTimeout(answer, 300);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-prometheus-checks-'));
    store = openSqliteStore({ dataDir });
    accountId = (await store.createAccount({ name: 'Acme' })).id;
    key = (await store.createKey({ accountId, name: 'admin', kind: 'full' })).secret;
    renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '1' });
    api = await startServiceProcess(API_MAIN, { MODE: 'hosted', DATA_DIR: dataDir, RENDERER_URL: renderer.base, JOB_POLL_INTERVAL_MS: '100' });
    prometheus = await startPrometheus(scrapeEverySecond({ [API_JOB]: [`127.0.0.1:${api.port}`] }));
    await prometheus.eventually(`up{job="${API_JOB}"} == 1`, (samples) => samples.length === 1);

    const created = await fetch(`${api.base}/api/monitors`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'checkout',
        schedule: '@yearly',
        pages: [{ name: 'pay', url: `${origin}/pay`, removeAds: false, checks: { status: [200], maxConsoleErrors: 0, webVitals: { TTFB: 150 } } }],
      }),
    });
    const body = (await created.json()) as { id: string };
    expect(created.status, JSON.stringify(body)).to.equal(201);
    monitorId = body.id;
  });

  after(async () => {
    await prometheus?.close();
    await Promise.all([api?.stop(), renderer?.stop()]);
    await store?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('fires ViewfinderMonitorWebVitalOverBound at the third run over the bound and ViewfinderMonitorPageChecksFailing once failing for its `for`', async () => {
    const selector = `job="${API_JOB}",namespace="${accountId}",name="checkout",page="pay"`;
    const first = await runNow();
    expect(first.pages[0]!.verdict.failures.map((failure) => failure.check)).to.deep.equal(['maxConsoleErrors', 'webVitals.TTFB']);
    await prometheus.eventually(`viewfinder_monitor_page_checks_failing{${selector}} == 2`, (samples) => samples.length === 1);
    expect(await value(`viewfinder_monitor_page_console_errors{${selector}}`)).to.equal(1);
    expect(await value(`viewfinder_monitor_page_web_vital{${selector},vital="TTFB"}`)).to.be.at.least(300);
    expect(await value(`viewfinder_monitor_page_web_vital_over_bound{${selector},vital="TTFB"}`)).to.equal(1);
    expect((await alerts()).filter((alert) => alert.labels.alertname === 'ViewfinderMonitorWebVitalOverBound'), 'one run over the bound is not 3').to.deep.equal([]);

    await runNow();
    await runNow();
    await prometheus.eventually(`viewfinder_monitor_page_web_vital_over_bound_runs{${selector},vital="TTFB"} == 3`, (samples) => samples.length === 1);
    await expectEventually(async () => {
      const firing = (await alerts()).filter((alert) => alert.state === 'firing').map((alert) => alert.labels.alertname).sort();
      expect(firing).to.deep.equal(['ViewfinderMonitorPageChecksFailing', 'ViewfinderMonitorWebVitalOverBound']);
    }, 120_000);
    const [checks] = (await alerts()).filter((alert) => alert.labels.alertname === 'ViewfinderMonitorPageChecksFailing');
    expect(checks!.labels).to.deep.equal({ alertname: 'ViewfinderMonitorPageChecksFailing', namespace: accountId, name: 'checkout', page: 'pay', severity: 'warning' });
    const [vital] = (await alerts()).filter((alert) => alert.labels.alertname === 'ViewfinderMonitorWebVitalOverBound');
    expect(vital!.labels).to.deep.include({ page: 'pay', vital: 'TTFB' });
  });

  it('clears both alerts once a run finds the page fixed', async () => {
    broken = false;
    const fixed = await runNow();
    expect(fixed.pages[0]!.verdict.failures).to.deep.equal([]);
    const selector = `job="${API_JOB}",namespace="${accountId}",name="checkout",page="pay"`;
    await prometheus.eventually(`viewfinder_monitor_page_checks_failing{${selector}} == 0`, (samples) => samples.length === 1);
    expect(await value(`viewfinder_monitor_page_web_vital_over_bound{${selector},vital="TTFB"}`)).to.equal(0);
    await expectEventually(async () => expect(await alerts()).to.deep.equal([]), 60_000);
  });
});
