import { expect } from 'chai';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * A site key is confined to its site on /api/captures as on /api/screenshot: another site's
 * captures are 404 to it, and idempotency keys are the site's own. Full-access keys see every site's.
 */
describe('asynchronous captures are scoped to the site key that made them', function () {
  this.timeout(60_000);
  let fixtures: FixtureServer;
  let hosted: HostedHarness;
  let keys: { a1: string; a2: string };
  let sites: { a1: string; a2: string };

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    hosted = await startHosted({ captures: true });
    const a1 = await hosted.store.createSite({ accountId: hosted.account.id, name: 'a1', allowedDomains: [] });
    const a2 = await hosted.store.createSite({ accountId: hosted.account.id, name: 'a2', allowedDomains: [] });
    sites = { a1: a1.id, a2: a2.id };
    keys = {
      a1: (await hosted.store.createKey({ accountId: hosted.account.id, name: 'a1', kind: 'site', siteId: a1.id })).secret,
      a2: (await hosted.store.createKey({ accountId: hosted.account.id, name: 'a2', kind: 'site', siteId: a2.id })).secret,
    };
  });
  afterEach(() => hosted.close());

  it('answers 404 to another site\'s key for a capture, its status and its image; 200 to the site\'s key and to a full-access key', async () => {
    const submitted = await hosted.api(keys.a1).post('/api/captures', { url: fixtures.url('/geometry') });
    expect(submitted.status).to.equal(202);
    const id = submitted.body.id as string;
    const theirs = await hosted.api(keys.a2).get(`/api/captures/${id}`);
    expect(theirs.status).to.equal(404);
    expect(theirs.body).to.deep.equal({ success: false, error: `Capture ${id} not found` });
    expect((await hosted.api(keys.a2).get(`/api/captures/${id}`).set('Accept', 'image/png')).status).to.equal(404);
    expect((await hosted.api(keys.a1).get(`/api/captures/${id}`)).status).to.equal(200);
    expect((await hosted.api(hosted.fullKey).get(`/api/captures/${id}`)).status).to.equal(200);
  });

  it('keeps idempotency keys per site: another site\'s key with the same key makes its own capture; a full-access key naming the site finds the site\'s', async () => {
    const first = await hosted.api(keys.a1).post('/api/captures', { url: fixtures.url('/geometry?first') }).set('Idempotency-Key', 'order-1');
    const other = await hosted.api(keys.a2).post('/api/captures', { url: fixtures.url('/geometry?second') }).set('Idempotency-Key', 'order-1');
    expect([first.status, other.status]).to.deep.equal([202, 202]);
    expect(other.body.id).to.not.equal(first.body.id);
    expect((await hosted.api(keys.a2).get(`/api/captures/${other.body.id}`)).body.url).to.equal(fixtures.url('/geometry?second'));
    const full = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry?first'), site_id: sites.a1 }).set('Idempotency-Key', 'order-1');
    expect(full.body.id).to.equal(first.body.id);
    const fullOther = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry?second'), site_id: sites.a2 }).set('Idempotency-Key', 'order-1');
    expect(fullOther.body.id).to.equal(other.body.id);
  });
});
