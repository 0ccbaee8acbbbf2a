import { expect } from 'chai';
import type { Account } from '../../lib/store/store.ts';
import type { ApiKeyResource, SiteResource } from '../../operator/src/resources.ts';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { decodeDataUri, sharedRenderer } from '../support/harness.ts';
import { Resources, ready, startFakeTarget, startHostedApi, startTestOperator, waitFor, type HostedApi, type KubeTarget, type RunningOperator } from './support.ts';

/**
 * Issue 7's acceptance walk-through, end to end: the operator (against the fake API server)
 * reconciles through the hosted API (createApp over HTTP, real Chromium, the embedded store), which
 * alone opens the store (issue 20). Pages are served on 127.0.0.1 and *.localhost.
 */
describe('operator acceptance: a Site and an ApiKey applied, captured with, changed and deleted', function () {
  this.timeout(120_000);
  let fixtures: FixtureServer;
  let hosted: HostedApi;
  let account: Account;
  let fullKey: string;
  let target: KubeTarget;
  let running: RunningOperator;
  let kube: Resources;

  before(async () => {
    fixtures = await startFixtureServer();
    target = await startFakeTarget();
    hosted = await startHostedApi(target, { renderer: await sharedRenderer() });
    // As `viewfinder accounts create` bootstraps a real install: an account and its full-access key.
    account = await hosted.store.createAccount({ name: 'Acme' });
    fullKey = (await hosted.store.createKey({ accountId: account.id, name: 'admin', kind: 'full' })).secret;
    running = await startTestOperator(target, { api: hosted });
    kube = new Resources(target);
  });
  after(async () => {
    await running.stop();
    await target.close();
    await hosted.close();
    await fixtures.close();
  });

  /** A call to the API over HTTP, as a client would make it: status and parsed body. */
  const call = async (method: string, path: string, key: string, body: object) => {
    const response = await fetch(new URL(path.slice(1), hosted.url), { method, headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const capture = (key: string, url: string) => call('POST', '/api/screenshot', key, { url });
  const siteAtGeneration = (generation: number) =>
    waitFor(`Site storefront Ready at generation ${generation}`, async () => {
      const site = await kube.get<SiteResource>('Site', 'storefront');
      return ready(site)?.status === 'True' && site?.status?.observedGeneration === generation ? site : undefined;
    });

  it('walks through apply, capture, domain changes and deletion', async () => {
    const port = new URL(fixtures.origin).port;
    const loopbackPage = fixtures.url('/simple');
    const localhostPage = `http://shop.localhost:${port}/simple`;

    // 1. Apply a Site and an ApiKey, and read the Secret.
    await kube.createSite('storefront', { account: account.id, allowedDomains: ['127.0.0.1'] });
    await kube.createApiKey('widget', { account: account.id, siteRef: 'storefront', restrictDomains: true });
    const site = await siteAtGeneration(1);
    await waitFor('ApiKey widget Ready', async () => ready(await kube.get<ApiKeyResource>('ApiKey', 'widget'))?.status === 'True');
    const key = (await kube.secretKey('widget')) as string;
    expect(key).to.match(/^vf_/);

    // The management API leaves the operator's objects alone: the resource is the source of truth.
    const edit = await call('PATCH', `/api/sites/${site.status?.siteId}`, fullKey, { allowedDomains: ['evil.example'] });
    expect(edit.status).to.equal(409);
    expect(edit.body.error).to.include('kubectl -n shop edit sites.viewfinder.dev storefront');

    // 2. Capture through the API in hosted mode with that key.
    const first = await capture(key, loopbackPage);
    expect(first.status, JSON.stringify(first.body).slice(0, 300)).to.equal(200);
    expect(first.body.site_id).to.equal(site.status?.siteId);
    expect(decodeDataUri(first.body.image).png.width).to.equal(1280);

    // 3. Change the domains: the API enforces them from the next request.
    await kube.patchSpec('Site', 'storefront', { allowedDomains: ['localhost'] });
    await siteAtGeneration(2);
    const rejected = await capture(key, loopbackPage);
    expect(rejected.status).to.equal(403);
    expect(rejected.body.error).to.match(/^Domain not allowed: 127\.0\.0\.1/);
    const accepted = await capture(key, localhostPage);
    expect(accepted.status, JSON.stringify(accepted.body).slice(0, 300)).to.equal(200);

    await kube.patchSpec('Site', 'storefront', { allowedDomains: ['example.com', '127.0.0.1'] });
    await siteAtGeneration(3);
    expect((await capture(key, localhostPage)).status).to.equal(403);
    expect((await capture(key, loopbackPage)).status).to.equal(200);

    // 4. Delete the key: the next capture is a 401.
    await kube.delete('ApiKey', 'widget');
    await waitFor('the ApiKey to be gone', async () => (await kube.get('ApiKey', 'widget')) === undefined);
    const revoked = await capture(key, loopbackPage);
    expect(revoked.status).to.equal(401);
    expect(revoked.body).to.deep.equal({ error: 'Invalid API key' });
  });
});
