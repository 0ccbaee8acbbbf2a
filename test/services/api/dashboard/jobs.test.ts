import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { chromiumLaunchOptions } from '../../../../services/renderer/src/pool.ts';
import { seriousAxeViolations } from '../../../support/axe.ts';
import { eventually } from '../../../support/eventually.ts';
import { closedPort, startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { testConfig } from '../../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../support/webhook-receiver.ts';
import { EMAIL, PASSWORD, startDashboard, type DashboardHarness } from './support.ts';

describe('dashboard Jobs page in a real browser (hosted, Chromium, axe-core)', function () {
  this.timeout(180_000);
  let dashboard: DashboardHarness;
  let fixtures: FixtureServer;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let page: Page;
  let origin: string;

  before(async () => {
    fixtures = await startFixtureServer();
    receiver = await startWebhookReceiver({ statuses: [500] });
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
    dashboard = await startDashboard({ WEBHOOK_RETRY_BASE_MS: '50', JOB_POLL_INTERVAL_MS: '50', ASYNC_CAPTURE_MAX_ATTEMPTS: '1' }, undefined, { captures: true });
    origin = await dashboard.listen();
    page = await (await browser.createBrowserContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    await receiver?.close();
    await fixtures?.close();
  });

  const submit = async (key: string, body: object) => {
    const response = await fetch(`${origin}/api/captures`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
    expect(response.status).to.equal(202);
    return ((await response.json()) as { id: string }).id;
  };
  const rows = () =>
    page.$$eval('tbody tr', (trs) => trs.map((tr) => Object.fromEntries(Array.from(tr.querySelectorAll('[data-label]')).map((cell) => [cell.getAttribute('data-label'), (cell as HTMLElement).innerText.replace(/\s+/g, ' ').trim()]))));

  it('lists the account\'s recent jobs with their state, attempts and webhook deliveries, with no serious axe violation', async () => {
    await page.goto(`${origin}/dashboard/jobs`);
    await page.type('#field-email', EMAIL);
    await page.type('#field-password', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(await page.$eval('h1', (h1) => h1.textContent)).to.equal('Jobs');
    expect(await page.$eval('main', (main) => main.textContent)).to.include('No asynchronous captures yet.');

    const site = await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'shop', allowedDomains: [] });
    const { secret } = await dashboard.store.createKey({ accountId: dashboard.account.id, name: 'k', kind: 'site', siteId: site.id });
    const other = await dashboard.store.createAccount({ name: 'Other' });
    const { secret: otherKey } = await dashboard.store.createKey({ accountId: other.id, name: 'k', kind: 'full' });
    const otherSite = await dashboard.store.createSite({ accountId: other.id, name: 'theirs', allowedDomains: [] });
    const theirs = await submit(otherKey, { url: fixtures.url('/simple'), site_id: otherSite.id });
    const good = await submit(secret, { url: fixtures.url('/geometry'), webhookUrl: receiver.url });
    const bad = await submit(secret, { url: `http://127.0.0.1:${await closedPort()}/` });
    await eventually('both jobs are finished and the webhook delivered', async () => {
      const states = await Promise.all([good, bad].map(async (id) => (await dashboard.store.getJob(id))?.state));
      const hook = await dashboard.store.findJobByIdempotencyKey(dashboard.account.id, `webhook:${good}`);
      return states.join() === 'succeeded,failed' && hook?.state === 'succeeded';
    }, 60_000);

    await page.goto(`${origin}/dashboard/jobs`);
    const listed = await rows();
    expect(listed.map((row) => row.Job)).to.deep.equal([bad, good]);
    expect(listed.map((row) => row.Job)).to.not.include(theirs);
    expect(listed[1]).to.deep.include({ URL: fixtures.url('/geometry'), State: 'succeeded', Attempts: '1 of 1' });
    expect(listed[1]!.Webhook).to.equal('delivered, 2 attempts Last error: webhook receiver answered 500');
    expect(listed[0]!.State).to.match(/^failed .*ERR_CONNECTION_REFUSED/);
    expect(listed[0]!.Webhook).to.equal('none');
    expect(await page.$eval('nav [aria-current="page"]', (a) => a.textContent)).to.equal('Jobs');
    const violations = (await seriousAxeViolations(page)).map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(', ')})`);
    expect(violations).to.deep.equal([]);
  });
});
