import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { waitFor } from '../../../operator/support.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * The management API's monitor routes on a hosted app (embedded store, real Chromium): create,
 * list, get, update, delete, runs, pictures, accept a baseline, run now; every bad input a 400 with
 * a clear message and nothing made; operator-owned monitors refuse edits with the kubectl command.
 */
describe('/api/monitors (hosted, real Chromium)', function () {
  this.timeout(180_000);
  let hosted: HostedHarness;
  let server: http.Server;
  let origin: string;
  let colour = '#2a9d8f';
  const seenOnAccount: http.IncomingHttpHeaders[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/account') seenOnAccount.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body style="margin:0"><h1>Offers</h1><div style="width:300px;height:120px;background:${colour}"></div></body></html>`);
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
  const body = (overrides: Record<string, unknown> = {}) => ({ name: 'offers', schedule: '0 6 * * *', pages: [{ name: 'offers', url: `${origin}/offers`, removeAds: false }], ...overrides });

  it('creates a monitor with the defaults, and lists and gets it', async () => {
    const created = await api().post('/api/monitors', body({ name: 'defaults' }));
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.deep.include({
      name: 'defaults',
      siteId: null,
      schedule: '0 6 * * *',
      timeZone: 'UTC',
      suspend: false,
      historyLimit: 10,
      compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
      baselines: {},
      managedBy: null,
    });
    expect(created.body.id).to.match(/^mon_/);
    expect(new Date(created.body.nextRunAt).getUTCHours()).to.equal(6);
    expect((await api().get('/api/monitors')).body.map((m: { id: string }) => m.id)).to.include(created.body.id);
    expect((await api().get(`/api/monitors/${created.body.id}`)).body.name).to.equal('defaults');
    expect((await api().get('/api/monitors/mon_missing')).status).to.equal(404);
    expect((await hosted.api().get('/api/monitors')).status, 'no key').to.equal(401);
  });

  it('keeps monitors, their runs and their pictures from site keys: every monitor route is for full-access keys (403)', async () => {
    const created = await api().post('/api/monitors', { name: 'scoped', schedule: '0 6 * * *', pages: [{ name: 'home', url: 'https://example.com/' }] });
    expect(created.status).to.equal(201);
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'scope', allowedDomains: [] });
    const { secret } = await hosted.store.createKey({ accountId: hosted.account.id, name: 'site', kind: 'site', siteId: site.id });
    const id = created.body.id as string;
    for (const path of ['/api/monitors', `/api/monitors/${id}`, `/api/monitors/${id}/runs`, `/api/monitors/${id}/images/img_missing`]) {
      expect((await hosted.api(secret).get(path)).status, path).to.equal(403);
    }
    expect((await hosted.api(secret).post(`/api/monitors/${id}/runs`, {})).status).to.equal(403);
    await api().delete(`/api/monitors/${id}`);
  });

  // Built before the fixture server listens: their pages name a URL of their own.
  const plain = (overrides: Record<string, unknown> = {}) => ({ name: 'offers', schedule: '0 6 * * *', pages: [{ name: 'offers', url: 'https://example.com/' }], ...overrides });
  const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a schedule that never fires', plain({ schedule: '0 0 30 2 *' }), /never fires/],
    ['a schedule with four fields', plain({ schedule: '0 6 * *' }), /five fields/],
    ['a time zone that does not exist', plain({ timeZone: 'Mars/Olympus' }), /not an IANA time zone/],
    ['a repeated page name', plain({ pages: [{ name: 'a', url: 'https://example.com/' }, { name: 'a', url: 'https://example.com/b' }] }), /page names are unique/],
    ['an unknown page option', plain({ pages: [{ name: 'a', url: 'https://example.com/', zoom: 2 }] }), /pages\[0\] has an unknown option: "zoom"/],
    ['21 pages (the limit is 20)', plain({ pages: Array.from({ length: 21 }, (_, i) => ({ name: `p${i}`, url: 'https://example.com/' })) }), /at most 20 pages/],
    ['a threshold above 1', plain({ compare: { threshold: 2 } }), /threshold must be <= 1/],
    ['fullPage with selector', plain({ pages: [{ name: 'a', url: 'https://example.com/', fullPage: true, selector: 'main' }] }), /fullPage and selector cannot be combined/],
    ['a site of another account', plain({ siteId: 'site_missing' }), /site site_missing not found/],
  ];
  for (const [label, input, message] of refusals) {
    it(`refuses ${label} with a 400 and makes nothing`, async () => {
      const before = (await api().get('/api/monitors')).body.length;
      const response = await api().post('/api/monitors', input);
      expect(response.status, response.text).to.equal(400);
      expect(response.body.error).to.match(message);
      expect((await api().get('/api/monitors')).body.length).to.equal(before);
    });
  }

  it('refuses a page URL that the site does not allow', async () => {
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'Shop', allowedDomains: ['shop.example'] });
    const response = await api().post('/api/monitors', body({ name: 'scoped', siteId: site.id }));
    expect(response.status).to.equal(400);
    expect(response.body.error).to.equal(`pages[0].url: 127.0.0.1 is not among the allowed domains of site ${site.id}`);
  });

  it('refuses a second monitor of the same name with a 409', async () => {
    expect((await api().post('/api/monitors', body({ name: 'twice' }))).status).to.equal(201);
    const again = await api().post('/api/monitors', body({ name: 'twice' }));
    expect(again.status).to.equal(409);
    expect(again.body.error).to.match(/already exists/);
  });

  it('updates a monitor: compare merges, a new schedule is checked', async () => {
    const created = (await api().post('/api/monitors', body({ name: 'updated' }))).body;
    const updated = await api().patch(`/api/monitors/${created.id}`, { compare: { threshold: 0.05 }, suspend: true });
    expect(updated.status, updated.text).to.equal(200);
    expect(updated.body).to.deep.include({ suspend: true, nextRunAt: null, compare: { threshold: 0.05, baseline: 'accepted', pixelTolerance: 0.1 } });
    expect((await api().patch(`/api/monitors/${created.id}`, { schedule: '61 * * * *' })).status).to.equal(400);
    expect((await api().patch(`/api/monitors/${created.id}`, {})).body.error).to.equal('Give at least one field to change');
  });

  it('takes a page behind a login: credentials write-only (hasCredentials), kept by an update that does not resend them, used by a run with the visit options', async () => {
    const credentials = { headers: { 'X-Test': 'header-secret' }, authorization: { type: 'bearer', token: 'bearer-secret' } };
    const page = { name: 'account', url: `${origin}/account`, removeAds: false, locale: 'fr-FR', timezone: 'Europe/Paris', blockResources: ['images'] };
    const created = await api().post('/api/monitors', body({ name: 'login', pages: [{ ...page, credentials }] }));
    expect(created.status, created.text).to.equal(201);
    expect(created.body.pages).to.deep.equal([{ ...page, hasCredentials: true }]);
    expect(created.text).to.not.match(/header-secret|bearer-secret/);
    const got = await api().get(`/api/monitors/${created.body.id}`);
    expect(got.text).to.not.match(/header-secret|bearer-secret/);

    const updated = await api().patch(`/api/monitors/${created.body.id}`, { pages: [{ ...page, locale: 'de-DE' }] });
    expect(updated.status, updated.text).to.equal(200);
    expect(updated.body.pages[0]).to.deep.include({ locale: 'de-DE', hasCredentials: true });

    const count = seenOnAccount.length;
    expect((await api().post(`/api/monitors/${created.body.id}/runs`)).status).to.equal(202);
    await waitFor('the run', async () => seenOnAccount.length > count, 600, 100);
    expect(seenOnAccount.at(-1)).to.include({ 'x-test': 'header-secret', authorization: 'Bearer bearer-secret', 'accept-language': 'de-DE' });

    const removed = await api().patch(`/api/monitors/${created.body.id}`, { pages: [{ ...page, credentials: {} }] });
    expect(removed.body.pages[0].hasCredentials).to.equal(false);
    const refused = await api().post('/api/monitors', body({ name: 'bad', pages: [{ ...page, credentials: { headers: { Host: 'x' } } }] }));
    expect(refused.status).to.equal(400);
    expect(refused.body.error).to.equal('pages[0]: headers cannot set "Host": the browser sets it');
    const site = await api().post('/api/sites', { allowedDomains: ['127.0.0.1'] });
    const scripted = await api().post('/api/monitors', body({ name: 'scripted', siteId: site.body.id, pages: [{ ...page, injectJs: 'document.body.innerHTML = ""' }] }));
    expect(scripted.status).to.equal(400);
    expect(scripted.body.error).to.equal("pages[0]: injectJs cannot be used with a site's allowed domains: a script can make the page show any site; leave siteId out");
  });

  it('runs now, lists the runs, serves the pictures, accepts a baseline, and deletes everything', async () => {
    const monitor = (await api().post('/api/monitors', body({ name: 'lifecycle' }))).body;
    const runs = async () => (await api().get(`/api/monitors/${monitor.id}/runs`)).body as Array<{ id: string; pages: Array<Record<string, unknown>> }>;
    const runNow = async () => {
      const count = (await runs()).length;
      const queued = await api().post(`/api/monitors/${monitor.id}/runs`);
      expect(queued.status).to.equal(202);
      expect(queued.body.jobId).to.match(/^job_/);
      await waitFor('the run', async () => (await runs()).length > count, 600, 100);
      return (await runs())[0]!;
    };
    const first = await runNow();
    expect(first.pages[0]).to.deep.include({ page: 'offers', outcome: 'baseline' });
    colour = '#e76f51';
    const second = await runNow();
    expect(second.pages[0]).to.deep.include({ outcome: 'changed' });

    for (const id of [second.pages[0]!.captureImageId, second.pages[0]!.diffImageId, second.pages[0]!.baselineImageId]) {
      const image = await api().get(`/api/monitors/${monitor.id}/images/${String(id)}`);
      expect(image.status).to.equal(200);
      expect(image.headers['content-type']).to.equal('image/png');
      expect((image.body as Buffer).subarray(1, 4).toString()).to.equal('PNG');
    }
    const other = await hosted.store.createMonitor({ accountId: hosted.account.id, name: 'other', siteId: null, schedule: '@daily', timeZone: 'UTC', suspend: false, historyLimit: 1, compare: { threshold: 0, baseline: 'accepted', pixelTolerance: 0 }, pages: [{ name: 'x', url: 'https://example.com/' }] });
    expect((await api().get(`/api/monitors/${other.id}/images/${String(second.pages[0]!.captureImageId)}`)).status, "another monitor's picture").to.equal(404);

    const accepted = await api().post(`/api/monitors/${monitor.id}/baseline`, { runId: second.id, page: 'offers' });
    expect(accepted.status, accepted.text).to.equal(200);
    expect(accepted.body.baselines.offers).to.equal(second.pages[0]!.captureImageId);
    expect((await runNow()).pages[0]).to.deep.include({ outcome: 'unchanged', diffRatio: 0 });
    expect((await api().post(`/api/monitors/${monitor.id}/baseline`, { runId: 'run_missing', page: 'offers' })).status).to.equal(404);

    const deleted = await api().delete(`/api/monitors/${monitor.id}`);
    expect(deleted.body).to.deep.equal({ deleted: monitor.id });
    expect((await api().get(`/api/monitors/${monitor.id}/images/${String(second.pages[0]!.captureImageId)}`)).status).to.equal(404);
    expect(await hosted.monitors!.images.get(String(second.pages[0]!.captureImageId))).to.equal(null);
  });

  it('refuses to edit or delete an operator-owned monitor, naming the kubectl command; runs and baselines stay allowed', async () => {
    const managed = await hosted.store.createMonitor({
      accountId: hosted.account.id,
      managedBy: { kind: 'PageMonitor', namespace: 'shop', name: 'storefront', uid: 'u1' },
      name: 'storefront',
      siteId: null,
      schedule: '@daily',
      timeZone: 'UTC',
      suspend: false,
      historyLimit: 5,
      compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
      pages: [{ name: 'offers', url: `${origin}/offers` }],
    });
    for (const response of [await api().patch(`/api/monitors/${managed.id}`, { suspend: true }), await api().delete(`/api/monitors/${managed.id}`)]) {
      expect(response.status).to.equal(409);
      expect(response.body.error).to.include('kubectl -n shop edit pagemonitors.viewfinder.dev storefront');
    }
    expect((await api().post(`/api/monitors/${managed.id}/runs`)).status).to.equal(202);
  });

  it('is documented in the OpenAPI document under Monitors', async () => {
    const document = (await hosted.api().get('/api/openapi.json')).body;
    expect(Object.keys(document.paths)).to.include.members(['/api/monitors', '/api/monitors/{monitorId}', '/api/monitors/{monitorId}/runs', '/api/monitors/{monitorId}/baseline', '/api/monitors/{monitorId}/images/{imageId}']);
    expect(document.paths['/api/monitors'].post.tags).to.deep.equal(['Monitors']);
  });
});
