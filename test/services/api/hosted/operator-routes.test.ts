import { expect } from 'chai';
import { CoreV1Api } from '@kubernetes/client-node';
import request from 'supertest';
import { generateSigningSecret, hashApiKey } from '../../../../lib/api-keys.ts';
import { cachedReviewer, kubeTokenReviewer } from '../../../../services/api/src/auth/operator-token.ts';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '../../../support/fake-kube-apiserver.ts';
import { createStubRenderer } from '../../../support/stub-renderer.ts';
import { startHosted, type HostedHarness } from './support.ts';

/**
 * The operator-facing routes (issue 20): a trusted ServiceAccount's token, checked with a real
 * TokenReview against the in-process Kubernetes API server, opens them; anything else is refused
 * in the usual error shape and changes nothing. Behind them, the idempotent managed writes.
 */
describe('operator routes (/api/operator)', () => {
  let fake: FakeKubeApiServer;
  let hosted: HostedHarness;
  let operatorToken: string;
  const trusted = 'viewfinder/viewfinder-operator';

  const tokenFor = async (namespace: string, name: string, audience = 'viewfinder-api') => {
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const answer = await core.createNamespacedServiceAccountToken({ namespace, name, body: { spec: { audiences: [audience] } } });
    return answer.status?.token as string;
  };
  const as = (token: string | undefined) => {
    const agent = request(hosted.app.callback());
    const auth = (test: request.Test) => (token === undefined ? test : test.set('Authorization', `Bearer ${token}`));
    return {
      get: (url: string) => auth(agent.get(url)),
      put: (url: string, body: object) => auth(agent.put(url)).set('Content-Type', 'application/json').send(body),
      post: (url: string, body?: object) => (body ? auth(agent.post(url)).set('Content-Type', 'application/json').send(body) : auth(agent.post(url))),
      delete: (url: string) => auth(agent.delete(url)),
    };
  };
  const siteBody = () => ({ accountId: hosted.account.id, uid: 'uid-1', name: 'shop/storefront', allowedDomains: ['Example.com', '*.example.org'] });

  beforeEach(async () => {
    fake = await startFakeKubeApiServer();
    const reviewer = cachedReviewer(kubeTokenReviewer(fake.kubeConfig(), 'viewfinder-api'), 10_000);
    hosted = await startHosted({ env: { OPERATOR_SERVICE_ACCOUNTS: trusted }, tokenReviewer: reviewer, renderer: createStubRenderer({ capacity: 1, delayMs: () => 0 }) });
    operatorToken = await tokenFor('viewfinder', 'viewfinder-operator');
  });
  afterEach(async () => {
    await hosted.close();
    await fake.close();
  });

  describe('who may call them', () => {
    it('refuses a request without a token, a garbage token and a token for another audience with 401, and changes nothing', async () => {
      const wrongAudience = await tokenFor('viewfinder', 'viewfinder-operator', 'https://kubernetes.default.svc');
      for (const token of [undefined, 'garbage', wrongAudience, hosted.fullKey]) {
        const answer = await as(token).put('/api/operator/sites/shop/storefront', siteBody());
        expect(answer.status, String(token)).to.equal(401);
        expect(Object.keys(answer.body)).to.deep.equal(['error']);
        expect(answer.body.error).to.match(/^Invalid token/);
      }
      expect(await hosted.store.findSiteByManagedBy({ kind: 'Site', namespace: 'shop', name: 'storefront' })).to.equal(null);
    });

    it('refuses a Viewfinder key or signing secret with 401 without sending it to the TokenReview (issue 44)', async () => {
      const before = fake.tokenReviews;
      for (const secret of [hosted.fullKey, generateSigningSecret(), 'vf_truncated']) {
        const answer = await as(secret).get(`/api/operator/accounts/${hosted.account.id}`);
        expect(answer.status, secret).to.equal(401);
        expect(answer.body).to.deep.equal({ error: 'Invalid token: this is a Viewfinder key, not a Kubernetes ServiceAccount token; it was not passed on' });
      }
      expect(fake.tokenReviews - before).to.equal(0);
    });

    it("refuses another ServiceAccount's valid token with 403, and changes nothing", async () => {
      const intruder = await tokenFor('viewfinder', 'intruder');
      const answer = await as(intruder).put('/api/operator/sites/shop/storefront', siteBody());
      expect(answer.status).to.equal(403);
      expect(answer.body).to.deep.equal({ success: false, error: 'ServiceAccount viewfinder/intruder is not trusted to manage Kubernetes-owned objects' });
      expect((await as(intruder).get(`/api/operator/accounts/${hosted.account.id}`)).status).to.equal(403);
      expect(await hosted.store.findSiteByManagedBy({ kind: 'Site', namespace: 'shop', name: 'storefront' })).to.equal(null);
    });

    it('admits the trusted ServiceAccount, and reviews its token once for many calls (the cache)', async () => {
      const before = fake.tokenReviews;
      for (let call = 0; call < 5; call += 1) {
        const answer = await as(operatorToken).get(`/api/operator/accounts/${hosted.account.id}`);
        expect(answer.status).to.equal(200);
        expect(answer.body).to.deep.equal({ id: hosted.account.id, name: 'Acme' });
      }
      expect(fake.tokenReviews - before).to.equal(1);
    });

    it('answers 503 when the Kubernetes API cannot review the token, so that the operator retries', async () => {
      fake.failNext(1, 500, (_method, url) => url.endsWith('/tokenreviews'));
      const answer = await as(operatorToken).get(`/api/operator/accounts/${hosted.account.id}`);
      expect(answer.status).to.equal(503);
      expect(answer.body.error).to.match(/^Cannot review the token/);
    });

    it('refuses every caller with 403 when the API trusts no ServiceAccount', async () => {
      const closed = await startHosted({ renderer: createStubRenderer({ capacity: 1, delayMs: () => 0 }) });
      try {
        const answer = await request(closed.app.callback()).get(`/api/operator/accounts/${closed.account.id}`).set('Authorization', `Bearer ${operatorToken}`);
        expect(answer.status).to.equal(403);
        expect(answer.body.error).to.include('OPERATOR_SERVICE_ACCOUNTS');
      } finally {
        await closed.close();
      }
    });
  });

  describe('what they do', () => {
    it('creates a site owned by its resource (201), updates it in place (200), finds it, and deletes it idempotently', async () => {
      const api = as(operatorToken);
      const created = await api.put('/api/operator/sites/shop/storefront', siteBody());
      expect(created.status).to.equal(201);
      expect(created.body).to.deep.include({ accountId: hosted.account.id, name: 'shop/storefront', allowedDomains: ['example.com', 'example.org'] });
      expect(created.body.managedBy).to.deep.equal({ kind: 'Site', namespace: 'shop', name: 'storefront', uid: 'uid-1' });
      const updated = await api.put('/api/operator/sites/shop/storefront', { ...siteBody(), allowedDomains: ['example.net'] });
      expect(updated.status).to.equal(200);
      expect(updated.body).to.deep.include({ id: created.body.id, allowedDomains: ['example.net'] });
      expect((await api.get('/api/operator/sites/shop/storefront')).body.id).to.equal(created.body.id);
      expect(await hosted.store.listSites(hosted.account.id)).to.have.length(1);
      // The management API still leaves it to its resource.
      const edit = await request(hosted.app.callback()).delete(`/api/sites/${created.body.id}`).set('X-API-Key', hosted.fullKey);
      expect(edit.status).to.equal(409);
      expect((await api.delete('/api/operator/sites/shop/storefront')).body).to.deep.equal({ deleted: created.body.id });
      expect((await api.delete('/api/operator/sites/shop/storefront')).body).to.deep.equal({ deleted: null });
      expect((await api.get('/api/operator/sites/shop/storefront')).status).to.equal(404);
    });

    it('refuses a site of another account (409), an unknown account (404) and a bad domain (400)', async () => {
      const api = as(operatorToken);
      await api.put('/api/operator/sites/shop/storefront', siteBody());
      const other = await hosted.store.createAccount({ name: 'Other' });
      expect((await api.put('/api/operator/sites/shop/storefront', { ...siteBody(), accountId: other.id })).status).to.equal(409);
      expect((await api.get('/api/operator/accounts/acct_000000000000000000000000')).status).to.equal(404);
      const bad = await api.put('/api/operator/sites/shop/other', { ...siteBody(), allowedDomains: ['999.1.1.1'] });
      expect(bad.status).to.equal(400);
      expect(bad.body.success).to.equal(false);
      expect(await hosted.store.findSiteByManagedBy({ kind: 'Site', namespace: 'shop', name: 'other' })).to.equal(null);
    });

    it('issues a key once (201 with the key, then 200 with null), regenerates it once, verifies by hash and revokes it', async () => {
      const api = as(operatorToken);
      const site = await api.put('/api/operator/sites/shop/storefront', siteBody());
      const body = { accountId: hosted.account.id, uid: 'uid-2', name: 'shop/widget', siteId: site.body.id, restrictDomains: true };
      const created = await api.put('/api/operator/keys/shop/widget', body);
      expect(created.status).to.equal(201);
      expect(created.headers['cache-control']).to.equal('no-store');
      expect(created.body.key).to.match(/^vf_/);
      expect(created.body.signingSecret).to.be.a('string');
      expect(await hosted.store.getSigningSecret(created.body.id)).to.equal(created.body.signingSecret);
      expect(created.body).to.deep.include({ kind: 'site', siteId: site.body.id, restrictDomains: true });
      expect(created.body).not.to.have.property('hash');
      const again = await api.put('/api/operator/keys/shop/widget', body);
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.include({ id: created.body.id, key: null, signingSecret: null });
      expect((await api.get('/api/operator/keys/shop/widget')).body).not.to.have.any.keys('key', 'signingSecret');

      const verify = async (key: string) => (await api.post('/api/operator/keys/shop/widget/verify', { keyHash: hashApiKey(key) })).body.matches;
      expect(await verify(created.body.key)).to.equal(true);
      const regenerated = await api.post('/api/operator/keys/shop/widget/regenerate');
      expect(regenerated.status).to.equal(200);
      expect(regenerated.body.id).to.equal(created.body.id);
      expect(regenerated.body.key).to.match(/^vf_/).and.not.equal(created.body.key);
      expect(regenerated.body.signingSecret).to.be.a('string').and.not.equal(created.body.signingSecret);
      expect(await hosted.store.getSigningSecret(created.body.id)).to.equal(regenerated.body.signingSecret);
      expect(await verify(created.body.key)).to.equal(false);
      expect(await verify(regenerated.body.key)).to.equal(true);
      expect((await api.post('/api/operator/keys/shop/widget/verify', { keyHash: 'not-a-hash' })).status).to.equal(400);

      expect((await api.delete('/api/operator/keys/shop/widget')).body).to.deep.equal({ deleted: created.body.id });
      expect((await api.delete('/api/operator/keys/shop/widget')).body).to.deep.equal({ deleted: null });
      expect(await hosted.store.findKeyByHash(hashApiKey(regenerated.body.key))).to.equal(null);
      expect((await api.post('/api/operator/keys/shop/widget/regenerate')).status).to.equal(404);
    });

    it('documents every operator route in the OpenAPI document, with the ServiceAccount token scheme', async () => {
      const document = (await request(hosted.app.callback()).get('/api/openapi.json')).body;
      expect(document.components.securitySchemes.serviceAccountToken).to.deep.include({ type: 'http', scheme: 'bearer' });
      const put = document.paths['/api/operator/keys/{namespace}/{name}'].put;
      expect(put.security).to.deep.equal([{ serviceAccountToken: [] }]);
      expect(Object.keys(put.responses)).to.include.members(['200', '201', '400', '401', '403', '404', '409', '503']);
      expect(Object.keys(document.paths).filter((path) => path.startsWith('/api/operator/'))).to.have.members([
        '/api/operator/accounts/{accountId}',
        '/api/operator/sites/{namespace}/{name}',
        '/api/operator/keys/{namespace}/{name}',
        '/api/operator/keys/{namespace}/{name}/regenerate',
        '/api/operator/keys/{namespace}/{name}/verify',
        // Issue 23: the PageMonitor controller's routes.
        '/api/operator/monitors/{namespace}/{name}',
        // Issue 43: a Site's spec.storage.
        '/api/operator/destinations/{namespace}/{name}',
      ]);
    });
  });

  describe("a Site's storage destination (issue #43)", () => {
    const path = '/api/operator/destinations/shop/storefront';
    const CREDENTIALS = { accessKeyId: 'AKIAOPERATORROUTE001', secretAccessKey: 'operator-route-secret/+=0123' };
    const destinationBody = (overrides: object = {}) => ({
      accountId: hosted.account.id,
      uid: 'uid-1',
      name: 'archive',
      endpoint: 'http://8.8.8.8:9000/',
      bucket: 'acme-shots',
      region: 'us-east-1',
      pathStyle: true,
      keyTemplate: '{id}.{format}',
      credentials: CREDENTIALS,
      ...overrides,
    });

    it('creates (201), replaces (200), reads and deletes it idempotently, never answering the credentials; only for the trusted ServiceAccount', async () => {
      expect((await as(undefined).put(path, destinationBody())).status).to.equal(401);
      await as(operatorToken).get(path).expect(404);
      const created = await as(operatorToken).put(path, destinationBody()).expect(201);
      expect(created.body).to.deep.include({ accountId: hosted.account.id, name: 'archive', endpoint: 'http://8.8.8.8:9000', hasCredentials: true, managedBy: { kind: 'Site', namespace: 'shop', name: 'storefront', uid: 'uid-1' } });
      const rotated = { accessKeyId: 'AKIAOPERATORROUTE002', secretAccessKey: 'rotated-route-secret' };
      await as(operatorToken).put(path, destinationBody({ credentials: rotated, bucket: 'moved' })).expect(200);
      expect(await hosted.store.getDestinationCredentials(hosted.account.id, 'archive')).to.deep.equal(rotated);
      const read = await as(operatorToken).get(path).expect(200);
      expect(read.body.bucket).to.equal('moved');
      expect(JSON.stringify([created.body, read.body])).to.not.include(CREDENTIALS.secretAccessKey);
      expect((await as(operatorToken).delete(path).expect(200)).body).to.deep.equal({ deleted: 'archive' });
      expect((await as(operatorToken).delete(path).expect(200)).body).to.deep.equal({ deleted: null });
    });

    it("answers 400 naming spec.storage.endpoint for an endpoint the guard refuses, and 409 for a name the account's other destination has", async () => {
      const refused = await as(operatorToken).put(path, destinationBody({ endpoint: 'http://169.254.169.254' })).expect(400);
      expect(refused.body.error).to.match(/^spec\.storage\.endpoint: storage endpoint refused: /);
      await hosted.store.createDestination({ accountId: hosted.account.id, name: 'archive', endpoint: 'http://8.8.4.4', bucket: 'theirs', region: 'us-east-1', pathStyle: true, keyTemplate: '{id}.{format}', credentials: CREDENTIALS });
      const taken = await as(operatorToken).put(path, destinationBody()).expect(409);
      expect(taken.body.error).to.equal('A storage destination named archive already exists in this account');
      expect((await as(operatorToken).put(path, destinationBody({ keyTemplate: '../{id}' })).expect(400)).body.error).to.match(/^keyTemplate /);
    });
  });
});

