import { expect } from 'chai';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import type { FixtureServer } from '../../../support/fixture-server.ts';
import { HEALTH_CHECKS, startHealthPages } from '../../../support/health-pages.ts';
import { waitFor } from '../../../operator/support.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * Checks on a monitor's pages (issue #40), end to end in the API: declared through the management
 * API, every run records each page's report and its checks' verdict (real Chromium against pages
 * this test serves on loopback: one healthy, one that logs a console error), GET .../runs/{runId}
 * answers them, the list of runs carries the verdicts, and /metrics shows the page's numbers.
 */
describe('checks on monitor pages, through a real monitor run (hosted, real Chromium)', function () {
  this.timeout(240_000);
  let hosted: HostedHarness;
  let pages: FixtureServer;

  before(async () => {
    pages = await startHealthPages();
    hosted = await startHosted({ monitors: true });
  });
  after(async () => {
    await hosted?.close();
    await pages?.close();
  });

  const api = () => hosted.api(hosted.fullKey);
  type RunAnswer = { id: string; pages: Array<Record<string, any>> };

  async function runNow(monitorId: string): Promise<RunAnswer> {
    const list = async () => (await api().get(`/api/monitors/${monitorId}/runs`)).body as RunAnswer[];
    const count = (await list()).length;
    expect((await api().post(`/api/monitors/${monitorId}/runs`)).status).to.equal(202);
    await waitFor('the run', async () => (await list()).length > count, 1200, 100);
    const [newest] = await list();
    const answer = await api().get(`/api/monitors/${monitorId}/runs/${newest!.id}`);
    expect(answer.status, answer.text).to.equal(200);
    return answer.body as RunAnswer;
  }

  it('records every page\'s report and judges its checks: the healthy page passes all, the broken one fails exactly its check, a page without checks has a report and no verdict', async () => {
    const created = await api().post('/api/monitors', {
      name: 'health',
      schedule: '0 6 * * *',
      pages: [
        { name: 'healthy', url: pages.url('/healthy'), removeAds: false, checks: HEALTH_CHECKS },
        { name: 'broken', url: pages.url('/console-error'), removeAds: false, checks: HEALTH_CHECKS },
        { name: 'unchecked', url: pages.url('/healthy'), removeAds: false },
      ],
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.pages[0].checks).to.deep.equal(HEALTH_CHECKS);

    const run = await runNow(created.body.id);
    const [healthy, broken, unchecked] = run.pages;
    // The pixels are judged apart: a first run takes the baselines, failing or not.
    expect(run.pages.map((page) => page.outcome)).to.deep.equal(['baseline', 'baseline', 'baseline']);

    expect(healthy!.verdict).to.deep.include({ failing: false, failures: [] });
    expect(healthy!.verdict.passed).to.deep.equal(['status', 'maxConsoleErrors', 'maxFailedRequests', 'webVitals.LCP', 'webVitals.CLS', 'maxViolations.serious', 'text[0].contains']);
    expect(healthy!.report.document).to.deep.equal({ url: pages.url('/healthy'), status: 200, redirects: [] });
    expect(healthy!.report.accessibility, 'axe ran: the checks declare maxViolations').to.have.property('violations');

    expect(broken!.verdict.failing).to.equal(true);
    expect(broken!.verdict.failures).to.deep.equal([{ check: 'maxConsoleErrors', measured: 1, bound: 0, message: '1 console error, at most 0 allowed' }]);
    expect(broken!.report.console.errors.items[0]).to.include({ message: 'checkout failed to start' });

    expect(unchecked!.verdict).to.equal(null);
    expect(unchecked!.report.document.status).to.equal(200);
    expect(unchecked!.report, 'no axe without maxViolations').to.not.have.property('accessibility');
    expect(unchecked!.report, 'no text without text checks').to.not.have.property('text');

    // The list of runs carries the verdicts; the reports only in the run's own answer.
    const [listed] = (await api().get(`/api/monitors/${created.body.id}/runs`)).body as RunAnswer[];
    expect(listed!.pages[1]).to.not.have.property('report');
    expect(listed!.pages[1]!.verdict).to.deep.equal(broken!.verdict);
    expect((await api().get(`/api/monitors/${created.body.id}/runs/run_missing`)).status).to.equal(404);

    const text = await apiRegistry.metrics();
    const sample = (name: string, labels: string) => text.split('\n').find((line) => line.startsWith(`${name}{namespace="${hosted.account.id}",name="health",${labels}} `))?.split(' ')[1];
    expect(sample('viewfinder_monitor_page_checks_failing', 'page="healthy"')).to.equal('0');
    expect(sample('viewfinder_monitor_page_checks_failing', 'page="broken"')).to.equal('1');
    expect(sample('viewfinder_monitor_page_checks_failing', 'page="unchecked"'), 'no checks, no series').to.equal(undefined);
    expect(sample('viewfinder_monitor_page_console_errors', 'page="broken"')).to.equal('1');
    expect(sample('viewfinder_monitor_page_console_errors', 'page="unchecked"')).to.equal('0');
    expect(sample('viewfinder_monitor_page_failed_requests', 'page="healthy"')).to.equal('0');
    expect(Number(sample('viewfinder_monitor_page_web_vital', 'page="healthy",vital="TTFB"'))).to.equal(healthy!.report.vitals.TTFB.value);
    expect(Number(sample('viewfinder_monitor_page_web_vital', 'page="healthy",vital="CLS"'))).to.equal(healthy!.report.vitals.CLS.value);
    expect(sample('viewfinder_monitor_page_axe_violations', 'page="healthy",impact="serious"')).to.equal('0');
    expect(sample('viewfinder_monitor_page_axe_violations', 'page="unchecked",impact="serious"'), 'axe did not run').to.equal(undefined);
    expect(sample('viewfinder_monitor_page_web_vital_over_bound', 'page="healthy",vital="LCP"')).to.equal('0');
    expect(sample('viewfinder_monitor_page_web_vital_over_bound', 'page="healthy",vital="FCP"'), 'no bound declared').to.equal(undefined);
    expect(sample('viewfinder_monitor_page_web_vital_over_bound_runs', 'page="healthy",vital="CLS"')).to.equal('0');

    // A new spec is read at the next scrape, without a new run: the page without checks has no such series.
    const { checks: _checks, ...withoutChecks } = created.body.pages[1];
    const patched = await api().patch(`/api/monitors/${created.body.id}`, { pages: [created.body.pages[0], withoutChecks, created.body.pages[2]].map(({ hasCredentials: _h, ...page }: Record<string, unknown>) => page) });
    expect(patched.status, patched.text).to.equal(200);
    const after = await apiRegistry.metrics();
    expect(after).to.include(`viewfinder_monitor_page_checks_failing{namespace="${hosted.account.id}",name="health",page="healthy"} 0`);
    expect(after).to.not.include(`viewfinder_monitor_page_checks_failing{namespace="${hosted.account.id}",name="health",page="broken"}`);
  });

  it('fails exactly the stylesheet check of a page whose stylesheet is missing, run after run', async () => {
    const checks = { status: [200], maxFailedRequests: { byType: { stylesheet: 0 } }, maxConsoleErrors: 0 };
    const created = await api().post('/api/monitors', { name: 'styles', schedule: '0 6 * * *', pages: [{ name: 'shop', url: pages.url('/missing-stylesheet'), removeAds: false, checks }] });
    expect(created.status, created.text).to.equal(201);
    const first = await runNow(created.body.id);
    expect(first.pages[0]!.verdict.failures.map((failure: { check: string }) => failure.check)).to.deep.equal(['maxFailedRequests.stylesheet']);
    expect(first.pages[0]!.verdict.passed).to.deep.equal(['status', 'maxConsoleErrors']);
    const second = await runNow(created.body.id);
    // Unchanged pixels, still failing: two different outcomes.
    expect(second.pages[0]).to.deep.include({ outcome: 'unchanged' });
    expect(second.pages[0]!.verdict.failing).to.equal(true);
    expect(second.pages[0]!.report.accessibility, 'no maxViolations, no axe').to.equal(undefined);
  });

  const plain = (checks: unknown) => ({ name: 'refused', schedule: '0 6 * * *', pages: [{ name: 'home', url: 'https://example.com/', checks }] });
  const refusals: Array<[string, unknown, string]> = [
    ['a negative count', { maxConsoleErrors: -1 }, 'pages[0].checks.maxConsoleErrors must be a count from 0 to 1000000, or {max, ignore}'],
    ['an unknown check', { maxErrors: 0 }, 'pages[0].checks has an unknown field: "maxErrors"'],
    ['a band that does not exist', { webVitals: { LCP: 'fast' } }, 'pages[0].checks.webVitals.LCP must be a number of at least 0 in its unit (ms; CLS a score), or good or needs-improvement'],
    ['a status out of range', { status: [700] }, 'pages[0].checks.status[0] must be <= 599'],
    ['a text check with nothing to look for', { text: [{ selector: '#buy' }] }, 'pages[0].checks.text[0] must be an object with contains or notContains, and optionally a selector'],
  ];
  for (const [label, checks, message] of refusals) {
    it(`refuses ${label} with a 400 that names the check, and makes nothing`, async () => {
      const response = await api().post('/api/monitors', plain(checks));
      expect(response.status, response.text).to.equal(400);
      expect(response.body.error).to.equal(message);
      expect((await api().get('/api/monitors')).body.map((monitor: { name: string }) => monitor.name)).to.not.include('refused');
    });
  }

  it('documents the run with its reports in the OpenAPI document', async () => {
    const document = (await hosted.api().get('/api/openapi.json')).body;
    const run = document.paths['/api/monitors/{monitorId}/runs/{runId}'].get;
    expect(run.tags).to.deep.equal(['Monitors']);
    const pageSchema = run.responses['200'].content['application/json'].schema.properties.pages.items;
    expect(pageSchema.required).to.include.members(['report', 'verdict']);
  });
});
