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
import { scrapeEverySecond, startPrometheus, type PrometheusProcess, type PrometheusSample as Sample } from '../support/prometheus.ts';

const API_JOB = 'viewfinder-api';

/**
 * Page monitors as an SRE sees them: a hosted API process and a renderer process (real Chromium)
 * run a monitor against a page this test changes, a real Prometheus scrapes the API's /metrics
 * every second with the chart's alerting rules loaded, and the test reads the series and the
 * alerts through Prometheus's HTTP API.
 */
describe('a real Prometheus scraping page monitors’ metrics and firing their alert', function () {
  this.timeout(240_000);
  let server: http.Server;
  let origin: string;
  let colour = '#2a9d8f';
  let renderer: ServiceProcess;
  let api: ServiceProcess;
  let prometheus: PrometheusProcess;
  let dataDir: string;
  let store: Store;
  let accountId: string;
  let key: string;
  let monitorId: string;

  const call = async (method: string, route: string, body?: object) => {
    const response = await fetch(`${api.base}${route}`, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  type PageResult = { page: string; outcome: string; diffRatio: number | null };
  /** Runs the monitor now; answers the run once it is listed. */
  const runNow = async (): Promise<{ id: string; pages: PageResult[] }> => {
    const before = (await call('GET', `/api/monitors/${monitorId}/runs`)).body.length as number;
    expect((await call('POST', `/api/monitors/${monitorId}/runs`)).status).to.equal(202);
    let runs: Array<{ id: string; pages: PageResult[] }> = [];
    await expectEventually(async () => {
      runs = (await call('GET', `/api/monitors/${monitorId}/runs`)).body;
      expect(runs).to.have.length(before + 1);
    }, 90_000);
    return runs[0]!;
  };
  const firing = async () => (await prometheus.alerts()).filter((alert) => alert.labels.alertname === 'ViewfinderMonitorPageChanged');
  const byPage = (samples: Sample[]) => Object.fromEntries(samples.map((sample) => [sample.metric.page, Number(sample.value[1])]));

  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      const box = req.url === '/offers' ? colour : '#0057b8';
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body style="margin:0"><h1>${req.url}</h1><div style="width:300px;height:120px;background:${box}"></div></body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-prometheus-monitors-'));
    store = openSqliteStore({ dataDir });
    const account = await store.createAccount({ name: 'Acme' });
    accountId = account.id;
    key = (await store.createKey({ accountId, name: 'admin', kind: 'full' })).secret;
    renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '1' });
    api = await startServiceProcess(API_MAIN, { MODE: 'hosted', DATA_DIR: dataDir, RENDERER_URL: renderer.base, JOB_POLL_INTERVAL_MS: '100' });
    prometheus = await startPrometheus(scrapeEverySecond({ [API_JOB]: [`127.0.0.1:${api.port}`] }));
    await prometheus.eventually(`up{job="${API_JOB}"} == 1`, (samples) => samples.length === 1);

    const created = await call('POST', '/api/monitors', {
      name: 'storefront',
      schedule: '@yearly',
      compare: { threshold: 0.01 },
      pages: [
        { name: 'home', url: `${origin}/home`, removeAds: false },
        { name: 'offers', url: `${origin}/offers`, removeAds: false },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    monitorId = created.body.id;
  });

  after(async () => {
    await prometheus?.close();
    await Promise.all([api?.stop(), renderer?.stop()]);
    await store?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('stores each page’s threshold and, once a run took the baselines, no diff ratio and no alert', async () => {
    const selector = `job="${API_JOB}",namespace="${accountId}",name="storefront"`;
    const thresholds = await prometheus.eventually(`viewfinder_monitor_page_diff_threshold{${selector}}`, (samples) => samples.length === 2);
    expect(byPage(thresholds)).to.deep.equal({ home: 0.01, offers: 0.01 });
    expect(Number((await prometheus.query(`viewfinder_monitor_interval_seconds{${selector}}`))[0]?.value[1]), '@yearly: at least 365 days').to.be.at.least(365 * 86_400);

    const first = await runNow();
    expect(first.pages.map((page) => page.outcome)).to.deep.equal(['baseline', 'baseline']);
    const baselines = await prometheus.eventually(`viewfinder_monitor_page_runs_total{${selector},outcome="baseline"}`, (samples) => samples.length === 2);
    expect(byPage(baselines)).to.deep.equal({ home: 1, offers: 1 });
    expect(await prometheus.query(`viewfinder_monitor_page_diff_ratio{${selector}}`), 'no ratio before a comparison').to.deep.equal([]);
    await prometheus.eventually(`viewfinder_monitor_page_last_run_success{${selector}}`, (samples) => samples.length === 2 && samples.every((sample) => sample.value[1] === '1'));
    expect(await firing()).to.deep.equal([]);
  });

  it('stores the diff ratio of a changed page as the run gives it, 0 for the other, and fires ViewfinderMonitorPageChanged for that page only', async () => {
    colour = '#e76f51';
    const changed = await runNow();
    const offers = changed.pages.find((page) => page.page === 'offers')!;
    expect(offers.outcome).to.equal('changed');
    // The 300 x 120 box changed colour: about 36 000 of the 1280 x 720 pixels.
    expect(offers.diffRatio).to.be.within(0.035, 0.045);

    const selector = `job="${API_JOB}",namespace="${accountId}",name="storefront"`;
    const ratios = await prometheus.eventually(`viewfinder_monitor_page_diff_ratio{${selector}}`, (samples) => samples.length === 2);
    expect(byPage(ratios)).to.deep.equal({ home: 0, offers: offers.diffRatio });
    expect(byPage(await prometheus.query(`viewfinder_monitor_page_runs_total{${selector},outcome="changed"}`))).to.deep.equal({ offers: 1 });
    expect(byPage(await prometheus.query(`viewfinder_monitor_page_runs_total{${selector},outcome="unchanged"}`))).to.deep.equal({ home: 1 });
    expect(Number((await prometheus.query(`viewfinder_monitor_run_duration_seconds_count{${selector}}`))[0]?.value[1])).to.equal(2);
    expect(Number((await prometheus.query(`viewfinder_monitor_consecutive_failed_runs{${selector}}`))[0]?.value[1])).to.equal(0);

    let alerts: Awaited<ReturnType<typeof firing>> = [];
    await expectEventually(async () => {
      alerts = await firing();
      expect(alerts.map((alert) => alert.state)).to.deep.equal(['firing']);
    }, 60_000);
    expect(alerts[0]!.labels).to.deep.equal({ alertname: 'ViewfinderMonitorPageChanged', namespace: accountId, name: 'storefront', page: 'offers', severity: 'warning' });
    expect(Number(alerts[0]!.value)).to.equal(offers.diffRatio);
    expect(alerts[0]!.annotations.summary).to.equal(`Page offers of monitor ${accountId}/storefront changed`);
  });

  it('resolves the alert once the new picture is accepted as the baseline and the next run is unchanged', async () => {
    const [last] = (await call('GET', `/api/monitors/${monitorId}/runs`)).body as Array<{ id: string }>;
    expect((await call('POST', `/api/monitors/${monitorId}/baseline`, { runId: last!.id, page: 'offers' })).status).to.equal(200);
    const next = await runNow();
    expect(next.pages.map((page) => page.outcome)).to.deep.equal(['unchanged', 'unchanged']);
    await prometheus.eventually(`viewfinder_monitor_page_diff_ratio{job="${API_JOB}",namespace="${accountId}",page="offers"} == 0`, (samples) => samples.length === 1);
    await expectEventually(async () => expect(await firing()).to.deep.equal([]), 60_000);
  });
});
