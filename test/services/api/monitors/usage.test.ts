import { expect } from 'chai';
import { startLoggingPages } from '../../../support/logging-pages.ts';
import { waitFor } from '../../../operator/support.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * Monitor captures in usage (hosted app, embedded store, real Chromium): a run of N pages adds N to
 * the account's usage as GET /api/usage and the dashboard's history read it, under the monitor
 * (they use no key) and under its site when it has one; and they take nothing from a key's rate limit.
 */
describe('page monitor captures in usage (hosted, real Chromium)', function () {
  this.timeout(180_000);
  let hosted: HostedHarness;
  let pages: Awaited<ReturnType<typeof startLoggingPages>>;

  before(async () => {
    pages = await startLoggingPages();
    hosted = await startHosted({ monitors: true });
  });
  after(async () => {
    await hosted?.close();
    await pages?.close();
  });

  const api = () => hosted.api(hosted.fullKey);
  type Counts = { captures: number; failures: number; bytes: number };

  async function runOnce(monitorId: string): Promise<void> {
    expect((await api().post(`/api/monitors/${monitorId}/runs`)).status).to.equal(202);
    await waitFor('the run', async () => (await api().get(`/api/monitors/${monitorId}/runs`)).body.length > 0, 900, 100);
  }

  it('counts each page of a run once, for the monitor and its site, and a failed page as a failure', async () => {
    const site = (await api().post('/api/sites', { name: 'Local', allowedDomains: ['127.0.0.1'] })).body;
    const monitorPages = ['a', 'b', 'c'].map((name) => ({ name, url: pages.url(name), removeAds: false }));
    const monitor = (await api().post('/api/monitors', { name: 'scoped', siteId: site.id, schedule: '@yearly', pages: [...monitorPages, { name: 'gone', url: 'http://127.0.0.1:9/', removeAds: false }] })).body;
    expect(monitor.id, JSON.stringify(monitor)).to.match(/^mon_/);
    await runOnce(monitor.id);

    const usage = (await api().get('/api/usage')).body as { sites: Record<string, Counts>; keys: Record<string, Counts>; monitors: Record<string, Counts> };
    expect(usage.monitors[monitor.id]).to.deep.include({ captures: 3, failures: 1 });
    expect(usage.monitors[monitor.id]!.bytes).to.be.greaterThan(3 * 1000);
    expect(usage.sites[site.id], 'the site counts what its monitor captured').to.deep.equal(usage.monitors[monitor.id]);
    expect(usage.keys, 'no key made these captures').to.deep.equal({});

    // The dashboard's usage page reads the same counts by day.
    const today = new Date().toISOString().slice(0, 10);
    const history = await hosted.store.listUsageHistory(hosted.account.id, today);
    expect(history.find((row) => row.scope === 'monitor' && row.id === monitor.id)).to.deep.include({ day: today, captures: 3, failures: 1 });
  });

  it('counts a full-access monitor under the monitor only, and uses none of a key’s rate limit', async () => {
    await hosted.store.setAccountRateLimit(hosted.account.id, 1);
    const monitorPages = ['d', 'e'].map((name) => ({ name, url: pages.url(name), removeAds: false }));
    const monitor = (await api().post('/api/monitors', { name: 'full', schedule: '@yearly', pages: monitorPages })).body;
    const sitesBefore = (await api().get('/api/usage')).body.sites;
    await runOnce(monitor.id);
    const usage = (await api().get('/api/usage')).body;
    expect(usage.monitors[monitor.id]).to.deep.include({ captures: 2, failures: 0 });
    expect(usage.sites, 'a monitor without a site counts for no site').to.deep.equal(sitesBefore);
    expect([pages.requests('d').length, pages.requests('e').length], 'each page loaded once').to.deep.equal([1, 1]);

    // The monitor's captures left the key's budget of 1 per minute whole: the first capture passes, the next is a 429.
    const site = (await api().post('/api/sites', { name: 'Budget', allowedDomains: ['127.0.0.1'] })).body;
    const first = await api().post('/api/screenshot', { url: pages.url('f'), site_id: site.id, removeAds: false });
    expect(first.status, first.text).to.equal(200);
    expect((await api().post('/api/screenshot', { url: pages.url('f'), site_id: site.id, removeAds: false })).status).to.equal(429);
  });
});
