import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
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
  let server: http.Server;
  let origin: string;
  const hits = new Map<string, number>();

  before(async () => {
    server = http.createServer((req, res) => {
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body><h1>${req.url}</h1></body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    hosted = await startHosted({ monitors: true });
  });
  after(async () => {
    await hosted.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const api = () => hosted.api(hosted.fullKey);
  type Counts = { captures: number; failures: number; bytes: number };

  async function runOnce(monitorId: string): Promise<void> {
    expect((await api().post(`/api/monitors/${monitorId}/runs`)).status).to.equal(202);
    await waitFor('the run', async () => (await api().get(`/api/monitors/${monitorId}/runs`)).body.length > 0, 900, 100);
  }

  it('counts each page of a run once, for the monitor and its site, and a failed page as a failure', async () => {
    const site = (await api().post('/api/sites', { name: 'Local', allowedDomains: ['127.0.0.1'] })).body;
    const pages = ['a', 'b', 'c'].map((name) => ({ name, url: `${origin}/${name}`, removeAds: false }));
    const monitor = (await api().post('/api/monitors', { name: 'scoped', siteId: site.id, schedule: '@yearly', pages: [...pages, { name: 'gone', url: 'http://127.0.0.1:9/', removeAds: false }] })).body;
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
    const pages = ['d', 'e'].map((name) => ({ name, url: `${origin}/${name}`, removeAds: false }));
    const monitor = (await api().post('/api/monitors', { name: 'full', schedule: '@yearly', pages })).body;
    const sitesBefore = (await api().get('/api/usage')).body.sites;
    await runOnce(monitor.id);
    const usage = (await api().get('/api/usage')).body;
    expect(usage.monitors[monitor.id]).to.deep.include({ captures: 2, failures: 0 });
    expect(usage.sites, 'a monitor without a site counts for no site').to.deep.equal(sitesBefore);
    expect([hits.get('/d'), hits.get('/e')]).to.deep.equal([1, 1]);

    // The monitor's captures left the key's budget of 1 per minute whole: the first capture passes, the next is a 429.
    const site = (await api().post('/api/sites', { name: 'Budget', allowedDomains: ['127.0.0.1'] })).body;
    const first = await api().post('/api/screenshot', { url: `${origin}/f`, site_id: site.id, removeAds: false });
    expect(first.status, first.text).to.equal(200);
    expect((await api().post('/api/screenshot', { url: `${origin}/f`, site_id: site.id, removeAds: false })).status).to.equal(429);
  });
});
