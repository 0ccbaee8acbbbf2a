import { expect } from 'chai';
import { startHosted, type HostedHarness } from './support.ts';

describe('management API (hosted, embedded store)', () => {
  let hosted: HostedHarness;
  beforeEach(async () => {
    hosted = await startHosted();
  });
  afterEach(() => hosted.close());

  const admin = () => hosted.api(hosted.fullKey);

  describe('authentication', () => {
    it('answers 401 with only an error field without a key', async () => {
      const response = await hosted.api().get('/api/sites');
      expect(response.status).to.equal(401);
      expect(response.body).to.have.all.keys('error');
    });

    it('answers 403 to a site key: managing the account needs a full-access key', async () => {
      const site = await admin().post('/api/sites', { allowedDomains: [] }).expect(201);
      const siteKey = await admin().post('/api/keys', { name: 's', siteId: site.body.id }).expect(201);
      const response = await hosted.api(siteKey.body.key).get('/api/sites');
      expect(response.status).to.equal(403);
      expect(response.body.error).to.match(/needs a full-access API key/);
    });

    it('does not serve the self-hosted /screenshot route in hosted mode', async () => {
      expect((await admin().post('/screenshot', { url: 'http://example.com/' })).status).to.equal(404);
    });
  });

  describe('sites', () => {
    it('creates a site with normalized domains, then lists and gets it', async () => {
      const created = await admin().post('/api/sites', { name: 'Shop', allowedDomains: ['*.Example.COM', 'bücher.de.', 'example.com'] });
      expect(created.status).to.equal(201);
      expect(created.body).to.include({ name: 'Shop', managedBy: null });
      expect(created.body.allowedDomains).to.deep.equal(['example.com', 'xn--bcher-kva.de']);
      expect(created.body.id).to.match(/^site_/);
      const listed = await admin().get('/api/sites').expect(200);
      expect(listed.body.sites).to.deep.equal([created.body]);
      expect((await admin().get(`/api/sites/${created.body.id}`).expect(200)).body).to.deep.equal(created.body);
    });

    it('names a site after its first domain when no name is given', async () => {
      const created = await admin().post('/api/sites', { allowedDomains: ['shop.example.com'] }).expect(201);
      expect(created.body.name).to.equal('shop.example.com');
    });

    const invalidDomains: [string, RegExp][] = [
      ['https://example.com', /"https:\/\/example.com" is not a host name \(remove the scheme\)/],
      ['example.com/path', /remove the path/],
      ['example.com:8080', /remove the port/],
      ['ex*ample.com', /only a leading "\*\." wildcard/],
    ];
    for (const [domain, message] of invalidDomains) {
      it(`rejects the allowed domain "${domain}" with a 400 that names it`, async () => {
        const response = await admin().post('/api/sites', { allowedDomains: ['ok.com', domain] });
        expect(response.status).to.equal(400);
        expect(response.body.success).to.equal(false);
        expect(response.body.error).to.match(message);
      });
    }

    it('rejects a body without allowedDomains, with unknown fields, or with a non-list', async () => {
      expect((await admin().post('/api/sites', {})).body.error).to.match(/must have required property 'allowedDomains'/);
      expect((await admin().post('/api/sites', { allowedDomains: [], owner: 'x' })).body.error).to.equal('Unknown field: "owner"');
      expect((await admin().post('/api/sites', { allowedDomains: 'example.com' })).status).to.equal(400);
    });

    it('answers 415 to a body that is not JSON', async () => {
      const response = await hosted.api(hosted.fullKey).post('/api/sites').set('Content-Type', 'text/plain').send('allowedDomains=x');
      expect(response.status).to.equal(415);
    });

    it('replaces allowedDomains with PATCH and validates them', async () => {
      const site = await admin().post('/api/sites', { allowedDomains: ['a.com'] }).expect(201);
      const patched = await admin().patch(`/api/sites/${site.body.id}`, { allowedDomains: ['B.com', '*.c.com'] }).expect(200);
      expect(patched.body.allowedDomains).to.deep.equal(['b.com', 'c.com']);
      expect(patched.body.name).to.equal('a.com');
      expect((await admin().patch(`/api/sites/${site.body.id}`, { allowedDomains: ['http://x.com'] })).status).to.equal(400);
      expect((await admin().patch(`/api/sites/${site.body.id}`, {})).body.error).to.equal('Give allowedDomains or name to change');
    });

    it('deletes a site and the keys scoped to it', async () => {
      const site = await admin().post('/api/sites', { allowedDomains: [] }).expect(201);
      await admin().post('/api/keys', { name: 's', siteId: site.body.id }).expect(201);
      expect((await admin().delete(`/api/sites/${site.body.id}`).expect(200)).body).to.deep.equal({ deleted: site.body.id });
      expect((await admin().get(`/api/sites/${site.body.id}`)).status).to.equal(404);
      const keys = (await admin().get('/api/keys').expect(200)).body.keys as { name: string }[];
      expect(keys.map((k) => k.name)).to.deep.equal(['admin']);
    });

    it("answers 404 for another account's site on get, patch and delete", async () => {
      const stranger = await hosted.store.createAccount({ name: 'Stranger' });
      const theirs = await hosted.store.createSite({ accountId: stranger.id, name: 'theirs', allowedDomains: ['x.com'] });
      expect((await admin().get(`/api/sites/${theirs.id}`)).status).to.equal(404);
      expect((await admin().patch(`/api/sites/${theirs.id}`, { allowedDomains: [] })).status).to.equal(404);
      expect((await admin().delete(`/api/sites/${theirs.id}`)).status).to.equal(404);
      expect((await hosted.store.getSite(theirs.id))?.allowedDomains).to.deep.equal(['x.com']);
    });
  });

  describe('keys', () => {
    it('creates a full-access key and returns its secret once; the list never shows a secret or a hash', async () => {
      const created = await admin().post('/api/keys', { name: 'ci' });
      expect(created.status).to.equal(201);
      expect(created.headers['cache-control']).to.equal('no-store');
      expect(created.body).to.include({ name: 'ci', kind: 'full', siteId: null, restrictDomains: false });
      expect(created.body.key).to.match(/^vf_[A-Za-z0-9_-]{43}$/);
      expect(created.body.prefix).to.equal(created.body.key.slice(0, 11));
      expect(created.body).to.not.have.property('hash');
      expect(created.body.signingSecret).to.match(/^vfs_[A-Za-z0-9_-]{43}$/);
      expect(await hosted.store.getSigningSecret(created.body.id)).to.equal(created.body.signingSecret);

      const listed = await admin().get('/api/keys').expect(200);
      const text = JSON.stringify(listed.body);
      expect(text).to.not.include(created.body.key);
      expect(text).to.not.include(created.body.key.slice(11));
      expect(text).to.not.include(created.body.signingSecret.slice(4));
      expect(listed.body.keys.find((k: { id: string }) => k.id === created.body.id)).to.not.have.property('signingSecret');
      const stored = await hosted.store.getKey(created.body.id);
      expect(text).to.not.include(stored!.hash);
      expect(listed.body.keys.find((k: { id: string }) => k.id === created.body.id)).to.not.have.property('key');
    });

    it('creates a site key with restrictDomains', async () => {
      const site = await admin().post('/api/sites', { allowedDomains: ['a.com'] }).expect(201);
      const created = await admin().post('/api/keys', { name: 'widget', siteId: site.body.id, restrictDomains: true }).expect(201);
      expect(created.body).to.include({ kind: 'site', siteId: site.body.id, restrictDomains: true });
    });

    it('refuses restrictDomains on a full-access key, and a site of another account', async () => {
      expect((await admin().post('/api/keys', { name: 'x', restrictDomains: true })).status).to.equal(400);
      const stranger = await hosted.store.createAccount({ name: 'Stranger' });
      const theirs = await hosted.store.createSite({ accountId: stranger.id, name: 'theirs', allowedDomains: [] });
      expect((await admin().post('/api/keys', { name: 'x', siteId: theirs.id })).status).to.equal(404);
    });

    it('regenerates a key: same id, a new secret returned once', async () => {
      const created = await admin().post('/api/keys', { name: 'ci' }).expect(201);
      const regenerated = await admin().post(`/api/keys/${created.body.id}/regenerate`).expect(200);
      expect(regenerated.body.id).to.equal(created.body.id);
      expect(regenerated.body.key).to.match(/^vf_/).and.not.equal(created.body.key);
      expect(regenerated.body.signingSecret).to.match(/^vfs_/).and.not.equal(created.body.signingSecret);
      expect(await hosted.store.getSigningSecret(created.body.id)).to.equal(regenerated.body.signingSecret);
      expect((await hosted.api(created.body.key).get('/api/sites')).status).to.equal(401);
      expect((await hosted.api(regenerated.body.key).get('/api/sites')).status).to.equal(200);
    });

    it('regenerating the key in use locks the caller out of the old key at once', async () => {
      const self = (await hosted.store.listKeys(hosted.account.id))[0]!;
      const regenerated = await admin().post(`/api/keys/${self.id}/regenerate`).expect(200);
      expect((await admin().get('/api/sites')).status).to.equal(401);
      expect((await hosted.api(regenerated.body.key).get('/api/sites')).status).to.equal(200);
    });

    it('deletes a key, which then fails at once', async () => {
      const created = await admin().post('/api/keys', { name: 'ci' }).expect(201);
      expect((await admin().delete(`/api/keys/${created.body.id}`).expect(200)).body).to.deep.equal({ deleted: created.body.id });
      expect((await hosted.api(created.body.key).get('/api/sites')).status).to.equal(401);
      expect((await admin().delete(`/api/keys/${created.body.id}`)).status).to.equal(404);
    });

    it("answers 404 for another account's key on delete and regenerate", async () => {
      const stranger = await hosted.store.createAccount({ name: 'Stranger' });
      const theirs = await hosted.store.createKey({ accountId: stranger.id, name: 'theirs', kind: 'full' });
      expect((await admin().delete(`/api/keys/${theirs.key.id}`)).status).to.equal(404);
      expect((await admin().post(`/api/keys/${theirs.key.id}/regenerate`)).status).to.equal(404);
      expect((await hosted.api(theirs.secret).get('/api/sites')).status).to.equal(200);
    });
  });

  describe('objects owned by the Kubernetes operator', () => {
    const siteOwner = { kind: 'Site' as const, namespace: 'shop', name: 'storefront', uid: 'u-1' };
    const keyOwner = { kind: 'ApiKey' as const, namespace: 'shop', name: 'storefront-key', uid: 'u-2' };

    it('answers 409 to PATCH and DELETE of a managed site, naming the Site resource to edit', async () => {
      const site = await hosted.store.upsertManagedSite({ accountId: hosted.account.id, name: 'storefront', allowedDomains: ['a.com'], managedBy: siteOwner });
      for (const response of [await admin().patch(`/api/sites/${site.id}`, { allowedDomains: [] }), await admin().delete(`/api/sites/${site.id}`)]) {
        expect(response.status).to.equal(409);
        expect(response.body.success).to.equal(false);
        expect(response.body.error).to.equal(
          `Site ${site.id} is managed by Kubernetes: edit the Site "storefront" in namespace "shop" instead (kubectl -n shop edit sites.viewfinder.dev storefront)`,
        );
      }
      expect((await hosted.store.getSite(site.id))?.allowedDomains).to.deep.equal(['a.com']);
      expect((await admin().get(`/api/sites/${site.id}`).expect(200)).body.managedBy).to.deep.equal(siteOwner);
    });

    it('answers 409 to DELETE and regenerate of a managed key, naming the ApiKey resource', async () => {
      const { key, secret } = await hosted.store.upsertManagedKey({ accountId: hosted.account.id, name: 'storefront-key', kind: 'full', managedBy: keyOwner });
      for (const response of [await admin().delete(`/api/keys/${key.id}`), await admin().post(`/api/keys/${key.id}/regenerate`)]) {
        expect(response.status).to.equal(409);
        expect(response.body.error).to.match(/edit the ApiKey "storefront-key" in namespace "shop" instead \(kubectl -n shop edit apikeys\.viewfinder\.dev storefront-key\)/);
      }
      expect((await hosted.api(secret!).get('/api/sites')).status).to.equal(200);
    });
  });

  describe('routing', () => {
    it('answers 405 with Allow for a wrong method on a known path', async () => {
      const response = await admin().patch('/api/keys', {});
      expect(response.status).to.equal(405);
      expect(response.headers.allow).to.equal('GET, HEAD, POST');
    });
  });
});
