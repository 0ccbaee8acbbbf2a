import { expect } from 'chai';
import { PNG } from 'pngjs';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import { waitFor } from '../../../operator/support.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';
import { capturedLogger } from '../../../support/captured-logger.ts';
import { MONITOR_RUN_JOB } from '../../../../services/api/src/monitors/service.ts';
import { startLoginSite, type LoginSite } from '../../../support/login-site.ts';

/**
 * Journeys on monitor pages (issue #41), end to end in the API: steps declared through the management
 * API, a fill's valueFrom naming one of the page's write-only credentials.values, and real monitor
 * runs (real Chromium) that sign in to a login form this test serves on loopback: the run reports
 * each step; a journey that stops (a wrong password) fails the page with a verdict naming the step
 * and the picture of that moment. The values typed are found in no answer, run or metric.
 */
const PASSWORD = 'pw-Mon41-journey-secret';
const WRONG = 'pw-Mon41-wrong-secret';

/** The sign-in of docs/monitors.md ("Journeys"): the user in clear, the password from the page's values. */
const SIGN_IN = [
  { action: 'fill', selector: '#user', value: 'ada' },
  { action: 'fill', selector: '#password', valueFrom: 'password' },
  { action: 'press', selector: '#password', key: 'Enter' },
  { action: 'waitFor', selector: '#welcome', timeout: 4000 },
];

describe('journeys on monitor pages (hosted, real Chromium)', function () {
  this.timeout(240_000);
  let hosted: HostedHarness;
  let site: LoginSite;
  const logs = capturedLogger();

  before(async () => {
    site = await startLoginSite(PASSWORD);
    // The API's logs (the app's and the monitor service's, at trace level) are searched for the values too.
    hosted = await startHosted({ monitors: true, logger: logs.logger });
  });
  after(async () => {
    await hosted?.close();
    await site?.close();
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

  describe('validation', () => {
    const monitorWith = (page: Record<string, unknown>) => ({ name: 'refused', schedule: '0 6 * * *', pages: [{ name: 'account', url: 'https://example.com/login', ...page }] });
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      [
        'a valueFrom naming a value the page does not have',
        { steps: SIGN_IN, credentials: { values: { pass: 'x' } } },
        'pages[0]: steps[1].valueFrom names "password", which credentials.values does not hold',
      ],
      ['a valueFrom on a page without credentials', { steps: SIGN_IN }, 'pages[0]: steps[1].valueFrom names "password", which credentials.values does not hold'],
      [
        'a fill with both value and valueFrom',
        { steps: [{ action: 'fill', selector: '#password', value: 'a', valueFrom: 'password' }], credentials: { values: { password: 'x' } } },
        'pages[0].steps[0] must be {"action": "fill", "selector": ..., and "value" or "valueFrom" (a credential\'s name), not both}, with an optional "timeout"',
      ],
      ['an unknown action', { steps: [{ action: 'evaluate', selector: 'body' }] }, 'pages[0].steps[0] must be an object whose "action" is one of goto, fill, click, press, select, check, uncheck, hover, scroll, waitFor, capture'],
      ['a step timeout beyond 30 s', { steps: [{ action: 'click', selector: '#go', timeout: 60_000 }] }, 'pages[0].steps[0].timeout must be an integer number of milliseconds from 1 to 30000'],
      [
        'a value with a name that is not one',
        { credentials: { values: { 'my password': 'x' } } },
        'pages[0].credentials.values must be an object of at most 20 names (1 to 64 letters, digits, _ . or -) to strings of at most 4096 characters',
      ],
    ];
    for (const [label, page, message] of refusals) {
      it(`refuses ${label} with a 400 that names the step, and makes nothing`, async () => {
        const response = await api().post('/api/monitors', monitorWith(page));
        expect(response.status, response.text).to.equal(400);
        expect(response.body.error).to.equal(message);
        expect(response.text).to.not.include('"x"');
        expect((await api().get('/api/monitors')).body.map((monitor: { name: string }) => monitor.name)).to.not.include('refused');
      });
    }

    it('keeps the values on PATCH as other credentials are kept, never shows them, and refuses a PATCH whose steps name a value the page lacks', async () => {
      const created = await api().post('/api/monitors', { name: 'kept', schedule: '0 6 * * *', pages: [{ name: 'account', url: 'https://example.com/login', steps: SIGN_IN, credentials: { values: { password: PASSWORD } } }] });
      expect(created.status, created.text).to.equal(201);
      expect(created.body.pages[0]).to.deep.include({ steps: SIGN_IN, hasCredentials: true }).and.not.have.property('credentials');
      expect(created.text).to.not.include(PASSWORD);
      // The page sent back as answered (hasCredentials aside): its values stay.
      const { hasCredentials: _h, ...shown } = created.body.pages[0];
      const patched = await api().patch(`/api/monitors/${created.body.id}`, { pages: [{ ...shown, steps: [...SIGN_IN, { action: 'capture', name: 'signed-in' }] }] });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body.pages[0].hasCredentials).to.equal(true);
      expect((await hosted.store.getMonitor(created.body.id))?.pages[0]?.credentials).to.deep.equal({ values: { password: PASSWORD } });
      // A monitor logged whole by mistake: its pages' credentials are redacted.
      logs.logger.info({ monitor: await hosted.store.getMonitor(created.body.id) }, 'a monitor logged whole');
      const logged = logs.lines.find((line) => line.includes('a monitor logged whole'));
      expect(logged).to.include('[redacted]').and.not.include(PASSWORD);
      const renamed = await api().patch(`/api/monitors/${created.body.id}`, { pages: [{ ...shown, steps: [{ action: 'fill', selector: '#password', valueFrom: 'secret' }] }] });
      expect(renamed.status, renamed.text).to.equal(400);
      expect(renamed.body.error).to.equal('pages[0]: steps[0].valueFrom names "secret", which credentials.values does not hold');
      expect((await api().delete(`/api/monitors/${created.body.id}`)).status).to.equal(200);
    });
  });

  it('signs in on every run: each step reported, the page behind the login captured; a wrong password fails the page at its step, with the picture of that moment', async () => {
    const created = await api().post('/api/monitors', {
      name: 'signed-in',
      schedule: '0 6 * * *',
      pages: [
        { name: 'account', url: `${site.origin}/login`, removeAds: false, steps: SIGN_IN, credentials: { values: { password: PASSWORD } }, checks: { text: [{ contains: 'Welcome, ada' }] } },
        { name: 'wrong', url: `${site.origin}/login`, removeAds: false, steps: SIGN_IN, credentials: { values: { password: WRONG } } },
      ],
    });
    expect(created.status, created.text).to.equal(201);

    const run = await runNow(created.body.id);
    const [account, wrong] = run.pages;
    expect(site.logins).to.deep.equal([
      { user: 'ada', ok: true },
      { user: 'ada', ok: false },
    ]);

    expect(account).to.deep.include({ outcome: 'baseline', error: null });
    expect(account!.report.document.url, 'the picture is of the page behind the login').to.equal(`${site.origin}/account`);
    expect(account!.verdict).to.deep.include({ failing: false, failures: [], passed: ['text[0].contains'] });
    expect(account!.journey.steps.map((step: { action: string; status: string }) => `${step.action}:${step.status}`)).to.deep.equal(['fill:ok', 'fill:ok', 'press:ok', 'waitFor:ok']);
    for (const step of account!.journey.steps) expect(step.durationMs).to.be.a('number');
    expect(account!.journey.steps[1]).to.deep.equal({ action: 'fill', selector: '#password', status: 'ok', durationMs: account!.journey.steps[1].durationMs });
    expect(account!.journey).to.not.have.property('failedStep');

    expect(wrong).to.deep.include({ outcome: 'failed', captureImageId: null, diffImageId: null, report: null });
    expect(wrong!.error).to.match(/^Step 4 of 4 \(waitFor "#welcome"\) failed: /);
    expect(wrong!.journey.failedStep).to.equal(3);
    expect(wrong!.journey.steps[3]).to.include({ action: 'waitFor', status: 'failed', reason: 'selector-not-visible' });
    expect(wrong!.verdict).to.deep.equal({ failing: true, failures: [{ check: 'steps[3]', measured: 'selector-not-visible', bound: 'ok', message: wrong!.error }], passed: [] });
    // The picture of the moment it stopped: the login page again, saying so; served like the run's other pictures.
    const picture = await api().get(`/api/monitors/${created.body.id}/images/${String(wrong!.journey.failureImageId)}`).buffer(true);
    expect(picture.status).to.equal(200);
    expect(picture.headers['content-type']).to.equal('image/png');
    expect(PNG.sync.read(picture.body as Buffer).width).to.be.greaterThan(0);

    // The list of runs and the operator's view carry the journeys too; the values nowhere.
    const listed = await api().get(`/api/monitors/${created.body.id}/runs`);
    expect(listed.body[0].pages[1].journey).to.deep.equal(wrong!.journey);
    const stored = [
      JSON.stringify(await hosted.store.getMonitorRun(run.id)),
      JSON.stringify(await hosted.store.listMonitorRuns(created.body.id, 10)),
      // The run's job row: what it was asked and what it answered.
      JSON.stringify(await hosted.store.listJobs(hosted.account.id, MONITOR_RUN_JOB, 10)),
    ];
    expect(stored[2]).to.include(run.id);
    const metrics = await apiRegistry.metrics();
    expect(metrics).to.include(`viewfinder_monitor_page_checks_failing{namespace="${hosted.account.id}",name="signed-in",page="wrong"} 1`);
    expect(logs.lines.length, 'the API logged its requests').to.be.greaterThan(0);
    for (const output of [...stored, JSON.stringify(run), listed.text, (await api().get(`/api/monitors/${created.body.id}`)).text, metrics, logs.lines.join('\n')]) {
      expect(output).to.not.include(PASSWORD);
      expect(output).to.not.include(WRONG);
    }

    // A journey that stops is judged again on the next run, never left hanging: the second run fails the same step.
    const second = await runNow(created.body.id);
    expect(second.pages.map((page) => page.outcome)).to.deep.equal(['unchanged', 'failed']);
    expect(second.pages[1]!.verdict.failures[0].check).to.equal('steps[3]');
    // Pruning knows the failure pictures: deleting the monitor deletes them.
    expect((await api().delete(`/api/monitors/${created.body.id}`)).status).to.equal(200);
    expect(await hosted.monitors!.images.get(String(wrong!.journey.failureImageId))).to.equal(null);
  });
});
