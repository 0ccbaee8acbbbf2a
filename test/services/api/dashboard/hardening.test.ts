import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { EMAIL, PASSWORD, startDashboard, type DashboardHarness } from './support.ts';

/**
 * The dashboard's forms against what a browser would never send but anyone can: bytes that are no
 * form, text that is not UTF-8, control characters, unknown fields; a reload of the page that
 * shows a new key; and another account's ids in the usage page. Each refusal leaves the store as
 * it was.
 */
describe('dashboard hardening (hosted, over HTTP)', () => {
  let dashboard: DashboardHarness;
  let client: ReturnType<typeof request.agent>;
  let csrf: string;

  beforeEach(async () => {
    dashboard = await startDashboard();
    client = request.agent(dashboard.app.callback());
    const form = await client.get('/dashboard/sign-in');
    await client.post('/dashboard/sign-in').type('form').send({ _csrf: csrfOf(form.text), email: EMAIL, password: PASSWORD, next: '/dashboard/keys' }).expect(303);
    csrf = csrfOf((await client.get('/dashboard/keys').expect(200)).text);
  });
  afterEach(() => dashboard.close());

  /** A form body exactly as given, bytes and all. */
  const post = (path: string, body: string | Buffer) =>
    client
      .post(path)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      // As it is: superagent would otherwise re-encode a Buffer as a form of its own.
      .serialize((bytes: Buffer) => bytes as unknown as string)
      .send(Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'));
  const counts = async () => ({
    sites: (await dashboard.store.listSites(dashboard.account.id)).length,
    keys: (await dashboard.store.listKeys(dashboard.account.id)).length,
  });
  const fieldError = (page: string, name: string) => new RegExp(`id="field-${name}-error">([^<]*)<`).exec(page)?.[1];

  it('refuses a name that is not UTF-8, next to the field, and saves nothing', async () => {
    const site = await post('/dashboard/sites', `_csrf=${csrf}&name=Caf%E9&allowedDomains=example.com`);
    expect(site.status).to.equal(400);
    expect(fieldError(site.text, 'name')).to.equal('name is not valid UTF-8 text');
    const key = await post('/dashboard/keys', `_csrf=${csrf}&name=%C3%28bad&siteId=`);
    expect(key.status).to.equal(400);
    expect(fieldError(key.text, 'name')).to.equal('name is not valid UTF-8 text');
    expect(await counts()).to.deep.equal({ sites: 0, keys: 0 });
  });

  it('signs a render link for a request without an Origin header (a 200, never a 500), on PUBLIC_BASE_URL whatever the Host header says', async () => {
    const site = await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'shop', allowedDomains: ['example.com'] });
    const key = await dashboard.store.createKey({ accountId: dashboard.account.id, name: 'links', kind: 'site', siteId: site.id });
    const answer = await client
      .post('/dashboard/keys/link')
      .set('Host', 'attacker.example')
      .type('form')
      .send({ _csrf: csrf, keyId: key.key.id, url: 'https://example.com/', format: 'png', cacheTtl: '0', expiresIn: '' });
    expect(answer.status).to.equal(200);
    const link = /(https?:\/\/[^"<\s]+\/api\/render\?[^"<\s]+)/.exec(answer.text)?.[1];
    expect(link, 'the page shows the signed link').to.be.a('string');
    expect(link!.startsWith('http://localhost:3000/api/render?')).to.equal(true);
  });

  it('refuses a JSON body that is not UTF-8 with 400, as the forms do, and saves nothing', async () => {
    const full = await dashboard.store.createKey({ accountId: dashboard.account.id, name: 'admin', kind: 'full' });
    const answer = await request(dashboard.app.callback())
      .post('/api/sites')
      .set('X-API-Key', full.secret)
      .set('Content-Type', 'application/json')
      .serialize((bytes: Buffer) => bytes as unknown as string)
      .send(Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from([0xe9]), Buffer.from('","allowedDomains":[]}')]));
    expect(answer.status).to.equal(400);
    expect(answer.body).to.deep.equal({ success: false, error: 'The request body is not valid UTF-8' });
    expect((await dashboard.store.listSites(dashboard.account.id)).length).to.equal(0);
  });

  it('refuses control characters in a name (NUL, a line break, ESC), next to the field, and saves nothing', async () => {
    for (const name of ['nul%00byte', 'two%0Alines', 'esc%1B[31m']) {
      const site = await post('/dashboard/sites', `_csrf=${csrf}&name=${name}&allowedDomains=example.com`);
      expect(site.status, name).to.equal(400);
      expect(fieldError(site.text, 'name'), name).to.match(/^name (contains a control character|must not contain control characters)/);
    }
    const key = await post('/dashboard/keys', `_csrf=${csrf}&name=ci%00&siteId=`);
    expect(key.status).to.equal(400);
    expect(fieldError(key.text, 'name')).to.match(/^name contains a control character \(U\+0000\)/);
    expect(await counts()).to.deep.equal({ sites: 0, keys: 0 });

    // The JSON API holds names to the same rule.
    const full = await dashboard.store.createKey({ accountId: dashboard.account.id, name: 'admin', kind: 'full' });
    const json = await request(dashboard.app.callback()).post('/api/sites').set('X-API-Key', full.secret).send({ name: 'a\u0000b', allowedDomains: [] });
    expect(json.status).to.equal(400);
    expect(json.body.error).to.equal('name must not contain control characters (such as NUL or a line break)');
  });

  it('answers a body that is no form with 400 and creates nothing, where it used to make an "Untitled site"', async () => {
    for (const body of [randomBytes(256), Buffer.from(`_csrf=${csrf}&name=%ZZ`), Buffer.from(`_csrf=${csrf}&justtext`)]) {
      const response = await post('/dashboard/sites', body);
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/^The form could not be read/);
    }
    expect(await counts()).to.deep.equal({ sites: 0, keys: 0 });
  });

  it('refuses fields the form does not have, as the JSON API refuses unknown fields', async () => {
    const site = await post('/dashboard/sites', `_csrf=${csrf}&name=Shop&allowedDomains=example.com&owner=someone-else`);
    expect(site.status).to.equal(400);
    expect(site.body.error).to.equal('Unknown field: "owner"');
    const key = await post('/dashboard/keys', `_csrf=${csrf}&name=ci&siteId=&kind=full&accountId=acct_x`);
    expect(key.status).to.equal(400);
    expect(key.body.error).to.equal('Unknown field: "kind"; Unknown field: "accountId"');
    expect(await counts()).to.deep.equal({ sites: 0, keys: 0 });
    // The same forms without the extra fields work.
    expect((await post('/dashboard/sites', `_csrf=${csrf}&name=Shop&allowedDomains=example.com`)).status).to.equal(303);
  });

  it('shows a new key once after a redirect: reloading creates nothing and shows it no more', async () => {
    const created = await post('/dashboard/keys', `_csrf=${csrf}&name=ci&siteId=`);
    expect(created.status).to.equal(303);
    expect(created.headers.location).to.equal('/dashboard/keys/issued');
    expect(created.text).to.not.match(/vf_[\w-]{43}/);
    const shown = await client.get('/dashboard/keys/issued');
    expect(shown.status).to.equal(200);
    expect(shown.headers['cache-control']).to.equal('no-store');
    const key = /id="issued-key"[^>]*value="(vf_[\w-]{43})"/.exec(shown.text)?.[1];
    const signingSecret = /id="issued-signing-secret"[^>]*value="(vfs_[\w-]{43})"/.exec(shown.text)?.[1];
    expect(key).to.be.a('string');
    const [stored] = await dashboard.store.listKeys(dashboard.account.id);
    expect(await dashboard.store.getSigningSecret(stored!.id)).to.equal(signingSecret);

    for (let reload = 0; reload < 2; reload++) {
      const again = await client.get('/dashboard/keys/issued');
      expect(again.status).to.equal(200);
      expect(again.text).to.include('was shown').and.not.include(key!).and.not.include(signingSecret!);
    }
    expect(await counts()).to.deep.equal({ sites: 0, keys: 1 });

    // Regenerating goes the same way; the reload regenerates nothing.
    const regenerated = await post(`/dashboard/keys/${stored!.id}/regenerate`, `_csrf=${csrf}`);
    expect(regenerated.status).to.equal(303);
    const newKey = /id="issued-key"[^>]*value="(vf_[\w-]{43})"/.exec((await client.get('/dashboard/keys/issued')).text)?.[1];
    expect(newKey).to.be.a('string').and.not.equal(key);
    const hashAfter = (await dashboard.store.getKey(stored!.id))?.hash;
    expect((await client.get('/dashboard/keys/issued')).text).to.not.include(newKey!);
    expect((await dashboard.store.getKey(stored!.id))?.hash).to.equal(hashAfter);
  });

  it("keeps the one-time view to the session that made the key: another session's browser cannot open it", async () => {
    const created = await post('/dashboard/keys', `_csrf=${csrf}&name=ci&siteId=`).expect(303);
    const issuedCookie = /vf_issued=[^;]+/.exec(String(created.headers['set-cookie']))?.[0];
    const other = request.agent(dashboard.app.callback());
    const form = await other.get('/dashboard/sign-in');
    await other.post('/dashboard/sign-in').type('form').send({ _csrf: csrfOf(form.text), email: EMAIL, password: PASSWORD, next: '/dashboard/keys' }).expect(303);
    expect(issuedCookie).to.be.a('string');
    const stolen = await other.get('/dashboard/keys/issued').set('Cookie', issuedCookie!);
    expect(stolen.text).to.include('was shown').and.not.match(/value="vf_[\w-]{43}"/);
  });

  it("answers 404 for usage of another account's site or key, as the other pages do", async () => {
    const stranger = await dashboard.store.createAccount({ name: 'Stranger' });
    const theirSite = await dashboard.store.createSite({ accountId: stranger.id, name: 'theirs', allowedDomains: [] });
    const theirKey = await dashboard.store.createKey({ accountId: stranger.id, name: 'theirs', kind: 'full' });
    expect((await client.get(`/dashboard/usage?of=site:${theirSite.id}`)).status).to.equal(404);
    expect((await client.get(`/dashboard/usage?of=key:${theirKey.key.id}`)).status).to.equal(404);
    expect((await client.get('/dashboard/usage?of=site:site_missing')).status).to.equal(404);
    expect((await client.get('/dashboard/usage?of=account:x')).status).to.equal(400);
    const mine = await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'mine', allowedDomains: [] });
    expect((await client.get(`/dashboard/usage?of=site:${mine.id}`)).status).to.equal(200);
    expect((await client.get('/dashboard/usage?of=all')).status).to.equal(200);
  });
});

/** The hidden CSRF token of the first form on a page. */
function csrfOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error(`no CSRF field on the page: ${page.slice(0, 200)}`);
  return match[1] as string;
}
