import { createHash } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { EMAIL, PASSWORD, startDashboard, type DashboardHarness } from './support.ts';

/** The hidden CSRF token of the first form on a page. */
function csrfOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error(`no CSRF field on the page: ${page.slice(0, 200)}`);
  return match[1] as string;
}

describe('dashboard sign-in, sessions and CSRF (hosted, over HTTP)', () => {
  let dashboard: DashboardHarness;
  afterEach(() => dashboard.close());

  /** A browser-like agent that keeps cookies; signs in unless told not to. */
  const agent = () => request.agent(dashboard.app.callback());
  const signIn = async (client = agent(), email = EMAIL, password = PASSWORD) => {
    const form = await client.get('/dashboard/sign-in');
    const response = await client.post('/dashboard/sign-in').type('form').send({ _csrf: csrfOf(form.text), email, password, next: '/dashboard/keys' });
    return { client, response };
  };

  describe('with the defaults', () => {
    beforeEach(async () => {
      dashboard = await startDashboard();
    });

    it('sends a signed-out visitor to sign-in, and back to the page after signing in', async () => {
      const page = await agent().get('/dashboard/keys');
      expect(page.status).to.equal(303);
      expect(page.headers.location).to.equal('/dashboard/sign-in?next=%2Fdashboard%2Fkeys');
      const { client, response } = await signIn();
      expect(response.status).to.equal(303);
      expect(response.headers.location).to.equal('/dashboard/keys');
      const keys = await client.get('/dashboard/keys');
      expect(keys.status).to.equal(200);
      expect(keys.text).to.include('<h1>API keys</h1>').and.include(EMAIL);
    });

    it('sets an opaque HttpOnly, SameSite=Lax session cookie, not Secure over plain HTTP, and stores only its hash', async () => {
      const { response } = await signIn();
      const cookie = (response.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('vf_session='));
      expect(cookie).to.match(/^vf_session=[\w-]{43};/);
      expect(cookie).to.match(/; path=\/dashboard/).and.match(/; httponly/i).and.match(/; samesite=lax/i);
      expect(cookie).to.not.match(/; secure/i);
      const token = (cookie as string).slice('vf_session='.length, (cookie as string).indexOf(';'));
      expect(await dashboard.store.getSession(token)).to.equal(null);
    });

    it('gives the same answer for a wrong password and an unknown email', async () => {
      const wrong = (await signIn(agent(), EMAIL, 'not the password')).response;
      const unknown = (await signIn(agent(), 'nobody@example.com', PASSWORD)).response;
      expect(wrong.status).to.equal(401);
      expect(unknown.status).to.equal(401);
      const message = (text: string) => /<p class="error form-error" role="alert">([^<]*)<\/p>/.exec(text)?.[1];
      expect(message(wrong.text)).to.equal('The email or the password is incorrect.');
      expect(message(unknown.text)).to.equal(message(wrong.text));
      expect(wrong.headers['set-cookie']?.toString() ?? '').to.not.include('vf_session=');
    });

    it('refuses a sign-in without the CSRF token of its form', async () => {
      const client = agent();
      await client.get('/dashboard/sign-in');
      const response = await client.post('/dashboard/sign-in').type('form').send({ email: EMAIL, password: PASSWORD });
      expect(response.status).to.equal(403);
      expect(response.body).to.deep.equal({ success: false, error: 'Invalid or missing CSRF token: reload the page and submit the form again' });
    });

    it('refuses a state-changing page request without the session\'s CSRF token, and changes nothing', async () => {
      const { client } = await signIn();
      const response = await client.post('/dashboard/sites').type('form').send({ allowedDomains: 'example.com' });
      expect(response.status).to.equal(403);
      const forged = await client.post('/dashboard/sites').type('form').send({ allowedDomains: 'example.com', _csrf: 'x'.repeat(43) });
      expect(forged.status).to.equal(403);
      expect(await dashboard.store.listSites(dashboard.account.id)).to.deep.equal([]);
    });

    it('ends a session after the idle timeout, and after the absolute lifetime however busy', async () => {
      const { client } = await signIn();
      dashboard.advance(29 * 60_000);
      expect((await client.get('/dashboard/sites')).status).to.equal(200);
      dashboard.advance(31 * 60_000);
      const idle = await client.get('/dashboard/sites');
      expect(idle.status).to.equal(303);
      expect(idle.headers.location).to.match(/^\/dashboard\/sign-in/);

      // Seen every 25 minutes, so never idle: still over at 12 hours.
      const busy = (await signIn()).client;
      for (let minutes = 25; minutes < 12 * 60; minutes += 25) {
        dashboard.advance(25 * 60_000);
        expect((await busy.get('/dashboard/sites')).status, `after ${minutes} min`).to.equal(200);
      }
      dashboard.advance(25 * 60_000);
      expect((await busy.get('/dashboard/sites')).status).to.equal(303);
    });

    it('sweeps a session that expired unvisited when another one begins', async () => {
      const { response } = await signIn();
      const cookie = (response.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('vf_session=')) as string;
      const idHash = createHash('sha256').update(cookie.slice('vf_session='.length, cookie.indexOf(';'))).digest('hex');
      expect(await dashboard.store.getSession(idHash)).to.not.equal(null);
      dashboard.advance(31 * 60_000);
      await signIn();
      expect(await dashboard.store.getSession(idHash)).to.equal(null);
    });

    it('signs out: the session is gone from the store and its cookie opens nothing', async () => {
      const { client } = await signIn();
      const page = await client.get('/dashboard/sites');
      const signedOut = await client.post('/dashboard/sign-out').type('form').send({ _csrf: csrfOf(page.text) });
      expect(signedOut.status).to.equal(303);
      expect(signedOut.headers.location).to.equal('/dashboard/sign-in');
      expect((await client.get('/dashboard/sites')).status).to.equal(303);
    });

    it('serves pages with a strict CSP and no inline script', async () => {
      const { client } = await signIn();
      const page = await client.get('/dashboard/sites');
      expect(page.headers['content-security-policy']).to.include("default-src 'none'").and.include("script-src 'self'").and.not.include('unsafe-inline');
      expect(page.headers['cache-control']).to.equal('no-store');
      expect(page.text).to.not.match(/<script(?![^>]*\ssrc=)/).and.not.match(/\son[a-z]+=/).and.not.match(/\sstyle=/);
      expect(page.text).to.not.match(/(src|href)="(https?:)?\/\//);
    });
  });

  it('limits sign-in attempts per email, with the same answer whether the email exists or not', async () => {
    dashboard = await startDashboard({ DASHBOARD_SIGN_IN_LIMIT_PER_ACCOUNT: '3' });
    for (const email of [EMAIL, 'nobody@example.com']) {
      const statuses = [];
      for (let attempt = 0; attempt < 4; attempt++) statuses.push((await signIn(agent(), email, 'wrong password!')).response.status);
      expect(statuses, email).to.deep.equal([401, 401, 401, 429]);
    }
    const blocked = (await signIn(agent(), EMAIL, PASSWORD)).response;
    expect(blocked.status).to.equal(429);
    expect(blocked.headers['retry-after']).to.match(/^\d+$/);
    expect(blocked.text).to.include('Too many sign-in attempts');
  });

  it('limits sign-in attempts per client address across emails', async () => {
    dashboard = await startDashboard({ DASHBOARD_SIGN_IN_LIMIT_PER_ADDRESS: '2' });
    expect((await signIn(agent(), 'a@example.com', 'wrong password!')).response.status).to.equal(401);
    expect((await signIn(agent(), 'b@example.com', 'wrong password!')).response.status).to.equal(401);
    expect((await signIn(agent(), EMAIL, PASSWORD)).response.status).to.equal(429);
  });

  it('marks the cookie Secure behind a TLS proxy only when TRUST_PROXY says to believe it', async () => {
    const cookieOver = async () => {
      const client = agent();
      const form = await client.get('/dashboard/sign-in').set('X-Forwarded-Proto', 'https');
      const signInCookie = (form.headers['set-cookie'] as unknown as string[])[0] as string;
      const response = await client
        .post('/dashboard/sign-in')
        .set('X-Forwarded-Proto', 'https')
        .set('Cookie', signInCookie.split(';')[0] as string)
        .type('form')
        .send({ _csrf: csrfOf(form.text), email: EMAIL, password: PASSWORD });
      return (response.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('vf_session=')) as string;
    };
    dashboard = await startDashboard();
    expect(await cookieOver()).to.not.match(/; secure/i);
    await dashboard.close();
    dashboard = await startDashboard({ TRUST_PROXY: 'true' });
    expect(await cookieOver()).to.match(/; secure/i);
  });

  describe('single sign-on through a trusted proxy', () => {
    const SECRET = 'a-shared-secret-of-the-proxy';

    it('is off by default: the email header alone signs nobody in', async () => {
      dashboard = await startDashboard();
      const response = await agent().get('/dashboard/sites').set('X-Forwarded-Email', EMAIL).set('X-Viewfinder-Proxy-Secret', SECRET);
      expect(response.status).to.equal(303);
    });

    it('maps the proxy\'s email to the user when the shared secret is right, and ignores it otherwise', async () => {
      dashboard = await startDashboard({ DASHBOARD_SSO_EMAIL_HEADER: 'X-Forwarded-Email', DASHBOARD_SSO_SECRET: SECRET });
      const client = agent();
      const signedIn = await client.get('/dashboard/sites').set('X-Forwarded-Email', 'ADA@example.com').set('X-Viewfinder-Proxy-Secret', SECRET);
      expect(signedIn.status).to.equal(200);
      expect(signedIn.text).to.include(EMAIL);
      const wrongSecret = await agent().get('/dashboard/sites').set('X-Forwarded-Email', EMAIL).set('X-Viewfinder-Proxy-Secret', 'not-the-secret-at-all');
      expect(wrongSecret.status).to.equal(303);
      const unknown = await agent().get('/dashboard/sites').set('X-Forwarded-Email', 'nobody@example.com').set('X-Viewfinder-Proxy-Secret', SECRET);
      expect(unknown.status).to.equal(403);
      expect(unknown.body.error).to.match(/no Viewfinder user has the email nobody@example.com/);
    });

    it('trusts a source range instead of a secret: loopback here, and not a range the request is outside of', async () => {
      dashboard = await startDashboard({ DASHBOARD_SSO_EMAIL_HEADER: 'X-Forwarded-Email', DASHBOARD_SSO_TRUSTED_SOURCES: '127.0.0.0/8,::1' });
      await dashboard.listen();
      const inside = await request(dashboard.origin).get('/dashboard/sites').set('X-Forwarded-Email', EMAIL);
      expect(inside.status).to.equal(200);
      await dashboard.close();
      dashboard = await startDashboard({ DASHBOARD_SSO_EMAIL_HEADER: 'X-Forwarded-Email', DASHBOARD_SSO_TRUSTED_SOURCES: '10.0.0.0/8' });
      await dashboard.listen();
      const outside = await request(dashboard.origin).get('/dashboard/sites').set('X-Forwarded-Email', EMAIL);
      expect(outside.status).to.equal(303);
    });
  });
});
