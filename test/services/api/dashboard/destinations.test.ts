import { expect } from 'chai';
import puppeteer, { type Browser } from 'puppeteer-core';
import { chromiumLaunchOptions } from '../../../../services/renderer/src/pool.ts';
import { testConfig } from '../../../support/harness.ts';
import { auditedPage, EMAIL, PASSWORD, startDashboard, type AuditedPage, type DashboardHarness } from './support.ts';

/**
 * The dashboard's Storage page in a real browser: a destination registered through the form (the
 * secret a password field, never shown again), a refused endpoint's message next to its field, and a
 * deletion after its confirmation page; no serious axe violation, no CSP refusal.
 */
describe('dashboard Storage page in a real browser (hosted, Chromium, axe-core)', function () {
  this.timeout(180_000);
  const SECRET = 'dashboard-secret-value-0123456789';
  let dashboard: DashboardHarness;
  let browser: Browser;
  let audited: AuditedPage;
  let origin: string;

  before(async () => {
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
    dashboard = await startDashboard();
    origin = await dashboard.listen();
    audited = await auditedPage(browser);
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  const fill = async (values: Record<string, string>) => {
    const { page } = audited;
    for (const [name, value] of Object.entries(values)) {
      await page.$eval(`#field-${name}`, (input) => ((input as HTMLInputElement).value = ''));
      await page.type(`#field-${name}`, value);
    }
  };

  it('registers a destination, refuses a private endpoint next to its field, and deletes after confirming', async () => {
    const { page } = audited;
    await page.goto(`${origin}/dashboard/destinations`);
    await page.type('#field-email', EMAIL);
    await page.type('#field-password', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(await page.$eval('h1', (h1) => h1.textContent)).to.equal('Storage destinations');
    expect(await page.$eval('nav [aria-current="page"]', (a) => a.textContent)).to.equal('Storage');
    expect(await page.$eval('#field-secretAccessKey', (input) => (input as HTMLInputElement).type)).to.equal('password');
    await audited.audit();

    await fill({ name: 'archive', endpoint: 'http://169.254.169.254', bucket: 'acme-shots', accessKeyId: 'AKIADASHBOARD', secretAccessKey: SECRET });
    await Promise.all([page.waitForNavigation(), page.click('button.primary')]);
    expect(await page.$eval('#field-endpoint-error', (p) => p.textContent)).to.match(/^storage endpoint refused: 169\.254\.169\.254 is a link-local address/);
    expect(await page.$eval('#field-secretAccessKey', (input) => (input as HTMLInputElement).value), 'the secret is not sent back').to.equal('');
    expect(await page.content()).to.not.include(SECRET);
    await audited.audit();

    await fill({ endpoint: 'http://8.8.8.8:9000', secretAccessKey: SECRET });
    await page.click('#field-pathStyle');
    await Promise.all([page.waitForNavigation(), page.click('button.primary')]);
    expect(page.url()).to.equal(`${origin}/dashboard/destinations?notice=destination-created`);
    expect(await page.$eval('.notice', (p) => p.textContent)).to.match(/^The destination was registered/);
    expect(await page.$eval('tbody', (tbody) => (tbody as HTMLElement).innerText)).to.include('archive');
    expect(await page.content()).to.not.include(SECRET);
    const stored = await dashboard.store.getDestination(dashboard.account.id, 'archive');
    expect(stored).to.deep.include({ endpoint: 'http://8.8.8.8:9000', bucket: 'acme-shots', pathStyle: true, keyTemplate: 'shots/{date}/{id}.{format}' });
    expect(await dashboard.store.getDestinationCredentials(dashboard.account.id, 'archive')).to.deep.equal({ accessKeyId: 'AKIADASHBOARD', secretAccessKey: SECRET });
    await audited.audit();

    await Promise.all([page.waitForNavigation(), page.click('a[href="/dashboard/destinations/archive/delete"]')]);
    await audited.audit();
    await Promise.all([page.waitForNavigation(), page.click('button.danger')]);
    expect(page.url()).to.equal(`${origin}/dashboard/destinations?notice=destination-deleted`);
    expect(await dashboard.store.getDestination(dashboard.account.id, 'archive')).to.equal(null);
  });

  it('lists a destination a Kubernetes Site owns with the command that changes it, no Delete link, and refuses its deletion (issue #43)', async () => {
    const { page } = audited;
    const managedBy = { kind: 'Site' as const, namespace: 'shop', name: 'storefront', uid: 'u1' };
    await dashboard.store.upsertManagedDestination({
      accountId: dashboard.account.id,
      name: 'from-site',
      endpoint: 'http://8.8.8.8:9000',
      bucket: 'acme-shots',
      region: 'us-east-1',
      pathStyle: true,
      keyTemplate: '{id}.{format}',
      credentials: { accessKeyId: 'AKIAMANAGED', secretAccessKey: SECRET },
      managedBy,
    });
    await page.goto(`${origin}/dashboard/destinations`);
    const rows = await page.$eval('tbody', (tbody) => (tbody as HTMLElement).innerText);
    expect(rows).to.include('Managed by Kubernetes (Site shop/storefront)').and.include('kubectl -n shop edit sites.viewfinder.dev storefront');
    expect(await page.$('a[href="/dashboard/destinations/from-site/delete"]')).to.equal(null);
    expect(await page.content()).to.not.include(SECRET);
    await audited.audit();
    // Its confirmation page, reached by its address: the deletion is refused with the API's reason.
    await page.goto(`${origin}/dashboard/destinations/from-site/delete`);
    await Promise.all([page.waitForNavigation(), page.click('button.danger')]);
    expect(await page.$eval('body', (body) => (body as HTMLElement).innerText)).to.include('Storage destination from-site is managed by Kubernetes');
    expect((await dashboard.store.getDestination(dashboard.account.id, 'from-site'))?.managedBy).to.deep.equal(managedBy);
  });
});
