import { expect } from 'chai';
import { closedPort, startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { decodeDataUri } from '../../../support/harness.ts';
import { startHosted, type HostedHarness } from './support.ts';

const GREEN: [number, number, number] = [0, 255, 0];

describe('POST /api/screenshot (hosted, embedded store, real Chromium)', () => {
  let fixtures: FixtureServer;
  let hosted: HostedHarness;
  /** The fixture server's port, for URLs on other loopback host names. */
  let port: string;

  before(async () => {
    fixtures = await startFixtureServer();
    port = new URL(fixtures.origin).port;
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    hosted = await startHosted();
  });
  afterEach(() => hosted.close());

  const createSite = async (allowedDomains: string[]) => {
    const response = await hosted.api(hosted.fullKey).post('/api/sites', { allowedDomains });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response.body.id as string;
  };
  const createKey = async (body: { name: string; siteId?: string; restrictDomains?: boolean }) => {
    const response = await hosted.api(hosted.fullKey).post('/api/keys', body);
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return { id: response.body.id as string, key: response.body.key as string };
  };
  const capture = (key: string | undefined, body: Record<string, unknown>) => hosted.api(key).post('/api/screenshot', body);

  describe('capturing', () => {
    it('captures with a full-access key and site_id: a real PNG, the SPEC 2.2 fields and the site', async () => {
      const siteId = await createSite([]);
      const response = await capture(hosted.fullKey, { url: fixtures.url('/geometry'), site_id: siteId });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
      expect(response.body).to.include({ success: true, url: fixtures.url('/geometry'), quality: 'standard', width: 1280, height: 720, site_id: siteId });
      const image = decodeDataUri(response.body.image);
      expect([image.png.width, image.png.height]).to.deep.equal([1280, 720]);
      expect(image.rgb(640, 360)).to.deep.equal(GREEN);
      expect(response.body.fileSize).to.equal(image.bytes.length);
    });

    it('captures with a site key without site_id, using its own site', async () => {
      const siteId = await createSite([]);
      const { key } = await createKey({ name: 'site', siteId });
      const response = await capture(key, { url: fixtures.url('/simple'), quality: 'mobile' });
      expect(response.status).to.equal(200);
      expect(response.body).to.include({ site_id: siteId, width: 750, height: 1334 });
    });

    it('captures with a site key that repeats its own site_id', async () => {
      const siteId = await createSite([]);
      const { key } = await createKey({ name: 'site', siteId });
      expect((await capture(key, { url: fixtures.url('/simple'), site_id: siteId })).status).to.equal(200);
    });

    it('validates the body exactly as the self-hosted route does', async () => {
      const siteId = await createSite([]);
      const response = await capture(hosted.fullKey, { site_id: siteId, wait: 10, extra: 1 });
      expect(response.status).to.equal(400);
      expect(response.body.success).to.equal(false);
      expect(response.body.error).to.include('URL is required').and.include('wait must be').and.include('Unknown field: "extra"');
    });
  });

  describe('authentication and site resolution, in order', () => {
    it('answers 401 with only an error field, saying the key is invalid, without a key', async () => {
      const response = await capture(undefined, { url: fixtures.url('/simple') });
      expect(response.status).to.equal(401);
      expect(response.body).to.have.all.keys('error');
      expect(response.body.error).to.match(/^Invalid API key/);
    });

    it('answers 401 for a well-formed key that does not exist, before looking at the body', async () => {
      const response = await capture(`vf_${'A'.repeat(43)}`, { nonsense: true });
      expect(response.status).to.equal(401);
      expect(response.body).to.deep.equal({ error: 'Invalid API key' });
    });

    it('answers 401 for a malformed key', async () => {
      expect((await capture('not-a-key', { url: fixtures.url('/simple') })).status).to.equal(401);
    });

    it('answers 400 when a full-access key gives no site_id', async () => {
      const response = await capture(hosted.fullKey, { url: fixtures.url('/simple') });
      expect(response.status).to.equal(400);
      expect(response.body).to.deep.equal({ success: false, error: 'site_id is required with a full-access API key' });
    });

    it('answers 404 for a site_id that does not exist', async () => {
      const response = await capture(hosted.fullKey, { url: fixtures.url('/simple'), site_id: 'site_000000000000000000000000' });
      expect(response.status).to.equal(404);
      expect(response.body.error).to.match(/^Site site_0+ not found$/);
    });

    it("answers 404 for another account's site, as if it did not exist", async () => {
      const stranger = await hosted.store.createAccount({ name: 'Stranger' });
      const theirs = await hosted.store.createSite({ accountId: stranger.id, name: 'theirs', allowedDomains: [] });
      const response = await capture(hosted.fullKey, { url: fixtures.url('/simple'), site_id: theirs.id });
      expect(response.status).to.equal(404);
    });

    it('answers 403 when a site key names another site', async () => {
      const own = await createSite([]);
      const other = await createSite([]);
      const { key } = await createKey({ name: 'site', siteId: own });
      const response = await capture(key, { url: fixtures.url('/simple'), site_id: other });
      expect(response.status).to.equal(403);
      expect(response.body.error).to.match(/scoped to another site/);
    });
  });

  describe('domain restrictions', () => {
    it('captures a URL on an allowed IP literal with a restricted key', async () => {
      const siteId = await createSite(['127.0.0.1']);
      const { key } = await createKey({ name: 'restricted', siteId, restrictDomains: true });
      const response = await capture(key, { url: fixtures.url('/geometry') });
      expect(response.status).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal(GREEN);
    });

    it('captures a subdomain of an allowed domain, with a port, through real Chromium', async () => {
      const siteId = await createSite(['localhost']);
      const { key } = await createKey({ name: 'restricted', siteId, restrictDomains: true });
      // Chromium resolves every *.localhost name to loopback itself, so this reaches the fixture server.
      const response = await capture(key, { url: `http://app.localhost:${port}/geometry` });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal(GREEN);
    });

    it('answers 403 naming the host, never the key, for a host outside the allowed domains', async () => {
      const siteId = await createSite(['localhost']);
      const { key } = await createKey({ name: 'restricted', siteId, restrictDomains: true });
      const response = await capture(key, { url: fixtures.url('/simple') });
      expect(response.status).to.equal(403);
      expect(response.body).to.deep.equal({ success: false, error: `Domain not allowed: 127.0.0.1 is not among the allowed domains of site ${siteId}` });
      expect(JSON.stringify(response.body)).to.not.include(key.slice(3, 15));
    });

    const refused: [string, (port: string) => string][] = [
      ['a look-alike suffix (evil-example.com)', () => 'http://evil-example.com/'],
      ['the domain as a prefix (example.com.evil.net)', () => 'http://example.com.evil.net/'],
      ['userinfo that looks like the domain (http://example.com@evil.net/)', () => 'http://example.com@evil.net/'],
    ];
    for (const [what, url] of refused) {
      it(`answers 403 for ${what}`, async () => {
        const siteId = await createSite(['example.com']);
        const { key } = await createKey({ name: 'restricted', siteId, restrictDomains: true });
        const response = await capture(key, { url: url(port) });
        expect(response.status).to.equal(403);
        expect(response.body.error).to.match(/^Domain not allowed: (evil-example\.com|example\.com\.evil\.net|evil\.net) /);
      });
    }

    it('names an IDN host in its punycode form when refusing it', async () => {
      const siteId = await createSite(['bücher.de']);
      const { key } = await createKey({ name: 'restricted', siteId, restrictDomains: true });
      const response = await capture(key, { url: 'http://BÜCHER.de.evil.net:8080/' });
      expect(response.status).to.equal(403);
      expect(response.body.error).to.match(/^Domain not allowed: xn--bcher-kva\.de\.evil\.net is not/);
    });

    it('allows nothing when a restricted key’s site has no domains', async () => {
      const siteId = await createSite([]);
      const { key } = await createKey({ name: 'restricted', siteId, restrictDomains: true });
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(403);
    });

    it('does not restrict a site key without restrictDomains', async () => {
      const siteId = await createSite(['example.com']);
      const { key } = await createKey({ name: 'open', siteId });
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(200);
    });

    it('reads the domains live: a PATCH applies from the very next request, both ways', async () => {
      const siteId = await createSite(['127.0.0.1']);
      const { key } = await createKey({ name: 'restricted', siteId, restrictDomains: true });
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(200);
      await hosted.api(hosted.fullKey).patch(`/api/sites/${siteId}`, { allowedDomains: ['example.com'] }).expect(200);
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(403);
      await hosted.api(hosted.fullKey).patch(`/api/sites/${siteId}`, { allowedDomains: ['example.com', 'EXAMPLE.org.', '127.0.0.1'] }).expect(200);
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(200);
    });
  });

  describe('key lifecycle', () => {
    it('refuses a regenerated key on the very next request and accepts the new one', async () => {
      const siteId = await createSite([]);
      const { id, key: oldKey } = await createKey({ name: 'rotating', siteId });
      expect((await capture(oldKey, { url: fixtures.url('/simple') })).status).to.equal(200);
      const regenerated = await hosted.api(hosted.fullKey).post(`/api/keys/${id}/regenerate`).expect(200);
      const oldAnswer = await capture(oldKey, { url: fixtures.url('/simple') });
      expect(oldAnswer.status).to.equal(401);
      expect(oldAnswer.body).to.deep.equal({ error: 'Invalid API key' });
      expect((await capture(regenerated.body.key, { url: fixtures.url('/simple') })).status).to.equal(200);
    });

    it('refuses a deleted key on the very next request', async () => {
      const siteId = await createSite([]);
      const { id, key } = await createKey({ name: 'doomed', siteId });
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(200);
      await hosted.api(hosted.fullKey).delete(`/api/keys/${id}`).expect(200);
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(401);
    });

    it('refuses a site key on the very next request once its site is deleted', async () => {
      const siteId = await createSite([]);
      const { key } = await createKey({ name: 'orphan', siteId });
      await hosted.api(hosted.fullKey).delete(`/api/sites/${siteId}`).expect(200);
      expect((await capture(key, { url: fixtures.url('/simple') })).status).to.equal(401);
    });

    it('records when a key was last used', async () => {
      const siteId = await createSite([]);
      const { id, key } = await createKey({ name: 'used', siteId });
      const before = Date.now();
      await capture(key, { url: fixtures.url('/simple') }).expect(200);
      const listed = await hosted.api(hosted.fullKey).get('/api/keys').expect(200);
      const lastUsedAt = listed.body.keys.find((k: { id: string }) => k.id === id).lastUsedAt as string;
      expect(Date.parse(lastUsedAt)).to.be.at.least(before - 1000);
    });
  });

  describe('usage', () => {
    it('counts captures, failures and bytes per site and per key', async () => {
      const siteId = await createSite([]);
      const { id: keyId, key } = await createKey({ name: 'counted', siteId });
      const first = await capture(key, { url: fixtures.url('/simple') }).expect(200);
      const second = await capture(hosted.fullKey, { url: fixtures.url('/geometry'), site_id: siteId }).expect(200);
      const failed = await capture(key, { url: `http://127.0.0.1:${await closedPort()}/` });
      expect(failed.status).to.equal(500);
      // Refused before capture: neither a capture nor a failure.
      await capture(key, { url: fixtures.url('/simple'), wait: 1 }).expect(400);

      const usage = await hosted.api(hosted.fullKey).get('/api/usage').expect(200);
      const fullKeyId = (await hosted.store.listKeys(hosted.account.id)).find((k) => k.name === 'admin')!.id;
      expect(usage.body.sites[siteId]).to.deep.equal({ captures: 2, failures: 1, bytes: first.body.fileSize + second.body.fileSize });
      expect(usage.body.keys[keyId]).to.deep.equal({ captures: 1, failures: 1, bytes: first.body.fileSize });
      expect(usage.body.keys[fullKeyId]).to.deep.equal({ captures: 1, failures: 0, bytes: second.body.fileSize });
    });
  });
});

describe('POST /api/screenshot rate limits (hosted)', () => {
  let fixtures: FixtureServer;
  let hosted: HostedHarness;
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    hosted = await startHosted({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
  });
  afterEach(() => hosted.close());

  it('answers 429 with Retry-After and RateLimit headers once the key has used its per-minute budget', async () => {
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 's', allowedDomains: [] });
    const body = { url: fixtures.url('/simple'), site_id: site.id };
    const first = await hosted.api(hosted.fullKey).post('/api/screenshot', body).expect(200);
    expect(first.headers).to.include({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1' });
    expect(Number(first.headers['ratelimit-reset'])).to.be.within(1, 60);
    await hosted.api(hosted.fullKey).post('/api/screenshot', body).expect(200);
    const refused = await hosted.api(hosted.fullKey).post('/api/screenshot', body);
    expect(refused.status).to.equal(429);
    expect(refused.body.success).to.equal(false);
    expect(refused.body.error).to.match(/^Rate limit exceeded: 2 captures per minute/);
    expect(Number(refused.headers['retry-after'])).to.be.within(1, 60);
    expect(refused.headers).to.include({ 'ratelimit-limit': '2', 'ratelimit-remaining': '0', 'ratelimit-policy': '2;w=60' });
  });

  it("uses the account's own limit over the default, per key", async () => {
    await hosted.store.setAccountRateLimit(hosted.account.id, 1);
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 's', allowedDomains: [] });
    const other = await hosted.store.createKey({ accountId: hosted.account.id, name: 'other', kind: 'full' });
    const body = { url: fixtures.url('/simple'), site_id: site.id };
    await hosted.api(hosted.fullKey).post('/api/screenshot', body).expect(200);
    expect((await hosted.api(hosted.fullKey).post('/api/screenshot', body)).status).to.equal(429);
    // The budget is per key: another key of the same account still has its own.
    expect((await hosted.api(other.secret).post('/api/screenshot', body)).status).to.equal(200);
  });

  it('counts only requests that passed the site and domain checks', async () => {
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 's', allowedDomains: ['example.com'] });
    const { secret } = await hosted.store.createKey({ accountId: hosted.account.id, name: 'r', kind: 'site', siteId: site.id, restrictDomains: true });
    for (let i = 0; i < 3; i++) await hosted.api(secret).post('/api/screenshot', { url: fixtures.url('/simple') }).expect(403);
    await hosted.api(hosted.fullKey).post('/api/screenshot', { url: fixtures.url('/simple') }).expect(400);
    await hosted.store.updateSite(site.id, { allowedDomains: ['127.0.0.1'] });
    const allowed = await hosted.api(secret).post('/api/screenshot', { url: fixtures.url('/simple') });
    expect(allowed.status).to.equal(200);
    expect(allowed.headers['ratelimit-remaining']).to.equal('1');
  });
});
