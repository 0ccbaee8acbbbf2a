import { AppsV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { hashApiKey } from '../../lib/api-keys.ts';
import { httpStatusOf } from '../../lib/k8s/api-errors.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';
import { capturedLogger } from '../support/captured-logger.ts';
import type { ApiKeyResource, SiteResource } from '../../operator/src/resources.ts';
import {
  Resources,
  describeOnEachTarget,
  ready,
  startFakeTarget,
  startHostedApi,
  startRealTarget,
  startTestOperator,
  useOperator,
  waitFor,
  type RunningOperator,
} from './support.ts';

/**
 * The whole operator (startOperator, as main.ts wires it) against an API server through
 * @kubernetes/client-node over HTTP: the in-process fake always, a real cluster when KUBECONFIG is set.
 */
describeOnEachTarget('operator', 60_000, (start) => {
  const ctx = useOperator(start);

  const readySite = (name: string) =>
    waitFor(`Site ${name} Ready`, async () => {
      const site = await ctx.kube.get<SiteResource>('Site', name);
      return ready(site)?.status === 'True' && site?.status?.observedGeneration === site?.metadata.generation ? site : undefined;
    });
  const readyKey = (name: string) =>
    waitFor(`ApiKey ${name} Ready`, async () => {
      const key = await ctx.kube.get<ApiKeyResource>('ApiKey', name);
      return ready(key)?.status === 'True' && key?.status?.observedGeneration === key?.metadata.generation ? key : undefined;
    });
  const notReady = (kind: 'Site' | 'ApiKey', name: string, reason: string) =>
    waitFor(`${kind} ${name} Ready=False ${reason}`, async () => {
      const resource = await ctx.kube.get<SiteResource | ApiKeyResource>(kind, name);
      const condition = ready(resource);
      return condition?.status === 'False' && condition.reason === reason ? condition : undefined;
    });

  describe('Sites', () => {
    it('reconciles a Site into the store, owned by it, and reports Ready with its siteId', async () => {
      await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: ['example.com', '*.Example.ORG'] });
      const site = await readySite('storefront');
      const stored = await ctx.running.store.getSite(site.status?.siteId as string);
      expect(stored?.allowedDomains).to.deep.equal(['example.com', 'example.org']);
      expect(stored?.managedBy).to.deep.equal({ kind: 'Site', namespace: ctx.target.namespace, name: 'storefront', uid: site.metadata.uid });
      expect(site.metadata.finalizers).to.include('viewfinder.dev/cleanup');
      expect(ready(site)?.reason).to.equal('Reconciled');
    });

    it('brings a change to allowedDomains into the store', async () => {
      await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: ['example.com'] });
      const site = await readySite('storefront');
      await ctx.kube.patchSpec('Site', 'storefront', { allowedDomains: ['shop.example.net'] });
      await waitFor('the new domains in the store', async () => {
        const stored = await ctx.running.store.getSite(site.status?.siteId as string);
        return stored?.allowedDomains.join() === 'shop.example.net' ? stored : undefined;
      });
      const updated = await readySite('storefront');
      expect(updated.metadata.generation).to.equal(2);
      expect(updated.status?.siteId).to.equal(site.status?.siteId);
    });

    it('reports AccountNotFound, with a Warning event, when spec.account is not in the store', async () => {
      await ctx.kube.createSite('orphan', { account: 'acct_000000000000000000000000', allowedDomains: [] });
      const condition = await notReady('Site', 'orphan', 'AccountNotFound');
      expect(condition.message).to.include('acct_000000000000000000000000').and.include('viewfinder accounts create');
      await waitFor('the Warning event', async () => (await ctx.kube.events()).find((event) => event.reason === 'AccountNotFound' && event.type === 'Warning'));
      expect(await ctx.running.store.findSiteByManagedBy({ kind: 'Site', namespace: ctx.target.namespace, name: 'orphan' })).to.equal(null);
    });

    it('deletes the store site when the Site is deleted, then lets the Site go', async () => {
      await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: [] });
      const site = await readySite('storefront');
      await ctx.kube.delete('Site', 'storefront');
      await waitFor('the Site to be gone', async () => (await ctx.kube.get('Site', 'storefront')) === undefined);
      expect(await ctx.running.store.getSite(site.status?.siteId as string)).to.equal(null);
    });

    it('reports ApiUnavailable while the API cannot be reached, and /readyz says so; Ready once it is back, with one site', async () => {
      const readyz = `http://127.0.0.1:${ctx.running.operator.port}/readyz`;
      await ctx.running.api.stop();
      await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: ['example.com'] });
      const condition = await notReady('Site', 'storefront', 'ApiUnavailable');
      expect(condition.message).to.match(/^The API at http:\/\/127\.0\.0\.1:\d+ cannot be reached: ECONNREFUSED/);
      await waitFor('the Warning event', async () => (await ctx.kube.events()).find((event) => event.reason === 'ApiUnavailable' && event.type === 'Warning'));
      const unready = await fetch(readyz);
      expect(unready.status).to.equal(503);
      expect(await unready.json()).to.include({ success: false, reason: 'ApiUnavailable' });
      await ctx.running.api.start();
      const site = await readySite('storefront');
      expect((await ctx.running.store.listSites(ctx.account.id)).map((stored) => stored.id)).to.deep.equal([site.status?.siteId]);
      expect((await fetch(readyz)).status).to.equal(200);
    });
  });

  describe('ApiKeys', () => {
    it('issues a key into a Secret owned by the ApiKey; the key is the store key, and status names it without the secret', async () => {
      await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: ['example.com'] });
      await readySite('storefront');
      await ctx.kube.createApiKey('widget', { account: ctx.account.id, siteRef: 'storefront', restrictDomains: true });
      const resource = await readyKey('widget');
      const secret = await ctx.kube.secret('widget');
      const plaintext = await ctx.kube.secretKey('widget');
      expect(plaintext).to.match(/^vf_[A-Za-z0-9_-]{43}$/);
      const stored = await ctx.running.store.findKeyByHash(hashApiKey(plaintext as string));
      expect(stored).to.include({ id: resource.status?.keyId, kind: 'site', restrictDomains: true, prefix: resource.status?.prefix });
      expect(stored?.managedBy).to.deep.equal({ kind: 'ApiKey', namespace: ctx.target.namespace, name: 'widget', uid: resource.metadata.uid });
      expect(secret?.metadata?.ownerReferences).to.deep.equal([
        { apiVersion: 'viewfinder.dev/v1alpha1', kind: 'ApiKey', name: 'widget', uid: resource.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(resource.status).to.include({ secretName: 'widget' });
      expect(resource.status?.lastRotatedAt).to.be.a('string');
      expect(JSON.stringify(resource)).not.to.include(plaintext);
      // The key's signing secret sits beside it, as the API holds it (issue 22's render links and webhooks).
      const signingSecret = await ctx.kube.secretField('widget', 'signingSecret');
      expect(signingSecret).to.be.a('string').and.have.length.greaterThan(20);
      expect(await ctx.running.store.getSigningSecret(resource.status?.keyId as string)).to.equal(signingSecret);
      expect(JSON.stringify(resource)).not.to.include(signingSecret);
      const events = await ctx.kube.events();
      expect(events.some((event) => event.reason === 'KeyIssued')).to.equal(true);
      expect(JSON.stringify(events)).not.to.include(plaintext);
      expect(JSON.stringify(events)).not.to.include(signingSecret);
    });

    it('writes the Secret under spec.secretName, and a key without siteRef is full-access', async () => {
      await ctx.kube.createApiKey('admin', { account: ctx.account.id, secretName: 'viewfinder-admin-key' });
      const resource = await readyKey('admin');
      expect(resource.status?.secretName).to.equal('viewfinder-admin-key');
      expect(await ctx.kube.secret('admin')).to.equal(undefined);
      const stored = await ctx.running.store.findKeyByHash(hashApiKey((await ctx.kube.secretKey('viewfinder-admin-key')) as string));
      expect(stored).to.include({ kind: 'full', siteId: null });
    });

    it('replaces the key and the Secret when rotation is raised; the old key stops working', async () => {
      await ctx.kube.createApiKey('widget', { account: ctx.account.id });
      const before = await readyKey('widget');
      const oldKey = (await ctx.kube.secretKey('widget')) as string;
      const oldSigningSecret = await ctx.kube.secretField('widget', 'signingSecret');
      await ctx.kube.patchSpec('ApiKey', 'widget', { rotation: 1 });
      const newKey = await waitFor('a new key in the Secret', async () => {
        const current = await ctx.kube.secretKey('widget');
        return current !== oldKey ? current : undefined;
      });
      const after = await readyKey('widget');
      expect(after.status?.keyId).to.equal(before.status?.keyId);
      expect(after.status?.prefix).to.equal((newKey as string).slice(0, 11));
      expect(await ctx.running.store.findKeyByHash(hashApiKey(oldKey))).to.equal(null);
      expect((await ctx.running.store.findKeyByHash(hashApiKey(newKey as string)))?.id).to.equal(before.status?.keyId);
      expect((await ctx.kube.secret('widget'))?.metadata?.annotations?.['viewfinder.dev/rotation']).to.equal('1');
      const newSigningSecret = await ctx.kube.secretField('widget', 'signingSecret');
      expect(newSigningSecret).to.be.a('string').and.not.equal(oldSigningSecret);
      expect(await ctx.running.store.getSigningSecret(before.status?.keyId as string)).to.equal(newSigningSecret);
      await waitFor('the KeyRotated event', async () => (await ctx.kube.events()).find((event) => event.reason === 'KeyRotated'));
    });

    it('makes an ApiKey whose Site does not exist yet Ready once the Site appears', async () => {
      await ctx.kube.createApiKey('widget', { account: ctx.account.id, siteRef: 'later' });
      const condition = await notReady('ApiKey', 'widget', 'SiteNotFound');
      expect(condition.message).to.include('later');
      await ctx.kube.createSite('later', { account: ctx.account.id, allowedDomains: [] });
      const site = await readySite('later');
      const resource = await readyKey('widget');
      expect((await ctx.running.store.getKey(resource.status?.keyId as string))?.siteId).to.equal(site.status?.siteId);
    });

    it('revokes the key when the ApiKey is deleted, and its Secret is garbage-collected', async () => {
      await ctx.kube.createApiKey('widget', { account: ctx.account.id });
      const resource = await readyKey('widget');
      const plaintext = (await ctx.kube.secretKey('widget')) as string;
      await ctx.kube.delete('ApiKey', 'widget');
      await waitFor('the ApiKey to be gone', async () => (await ctx.kube.get('ApiKey', 'widget')) === undefined);
      expect(await ctx.running.store.getKey(resource.status?.keyId as string)).to.equal(null);
      expect(await ctx.running.store.findKeyByHash(hashApiKey(plaintext))).to.equal(null);
      await waitFor('the Secret to be collected', async () => (await ctx.kube.secret('widget')) === undefined);
    });

    it('regenerates the key and writes a new Secret when the Secret is deleted (the plaintext is gone)', async () => {
      await ctx.kube.createApiKey('widget', { account: ctx.account.id });
      await readyKey('widget');
      const oldKey = (await ctx.kube.secretKey('widget')) as string;
      await ctx.kube.deleteSecret('widget');
      const newKey = await waitFor('a new Secret', async () => {
        const current = await ctx.kube.secretKey('widget');
        return current !== undefined && current !== oldKey ? current : undefined;
      });
      expect(await ctx.running.store.findKeyByHash(hashApiKey(oldKey))).to.equal(null);
      expect(await ctx.running.store.findKeyByHash(hashApiKey(newKey))).not.to.equal(null);
      await waitFor('the SecretRecreated warning', async () => (await ctx.kube.events()).find((event) => event.reason === 'SecretRecreated' && event.type === 'Warning'));
    });

    it('never overwrites a Secret it does not own: SecretConflict, and no key is issued', async () => {
      await ctx.kube.createSecret('taken', { password: 'hunter2' });
      await ctx.kube.createApiKey('widget', { account: ctx.account.id, secretName: 'taken' });
      await notReady('ApiKey', 'widget', 'SecretConflict');
      expect(Buffer.from((await ctx.kube.secret('taken'))?.data?.password ?? '', 'base64').toString()).to.equal('hunter2');
      expect(await ctx.running.store.findKeyByManagedBy({ kind: 'ApiKey', namespace: ctx.target.namespace, name: 'widget' })).to.equal(null);
    });

    it('changes nothing when a restarted operator reconciles the same resources again', async () => {
      await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: ['example.com'] });
      await readySite('storefront');
      await ctx.kube.createApiKey('widget', { account: ctx.account.id, siteRef: 'storefront' });
      const before = await readyKey('widget');
      const secretBefore = await ctx.kube.secret('widget');
      // Only the operator stops: the restarted one reconciles through the same API.
      const { api } = ctx.running;
      await ctx.running.operator.stop();
      const restarted = await startTestOperator(ctx.target, { api });
      try {
        await waitFor('the restarted operator to reconcile', async () => {
          const text = await restarted.operator.metrics.registry.getSingleMetricAsString('viewfinder_operator_reconcile_total');
          return /kind="ApiKey",result="success"} [1-9]/.test(text) && /kind="Site",result="success"} [1-9]/.test(text);
        });
        const after = await ctx.kube.get<ApiKeyResource>('ApiKey', 'widget');
        expect(after?.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
        expect((await ctx.kube.secret('widget'))?.metadata?.resourceVersion).to.equal(secretBefore?.metadata?.resourceVersion);
      } finally {
        await restarted.stop();
        await api.close();
        ctx.running = await startTestOperator(ctx.target);
      }
    });
  });

  describe('two replicas', () => {
    it('elects one leader; only it reconciles; when it dies the other takes over', async () => {
      const lease = { LEASE_NAME: 'viewfinder-operator-pair' };
      await ctx.running.stop();
      // Both replicas reconcile through one API.
      const api = await startHostedApi(ctx.target);
      const first = await startTestOperator(ctx.target, { env: lease, api });
      await waitFor('the first replica to lead', () => first.operator.isLeader());
      const second = await startTestOperator(ctx.target, { env: lease, api });
      ctx.running = second;
      try {
        ctx.account = await first.store.createAccount({ name: 'Acme' });
        await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: [] });
        await readySite('storefront');
        expect(second.operator.isLeader()).to.equal(false);
        const followerWork = await second.operator.metrics.registry.getSingleMetricAsString('viewfinder_operator_reconcile_total');
        expect(followerWork).not.to.match(/result="success"} [1-9]/);

        // A crash: the Lease is not released, so the follower must wait for it to expire.
        await first.stop({ release: false });
        await waitFor('the second replica to lead', () => second.operator.isLeader(), 400);
        await ctx.kube.createSite('checkout', { account: ctx.account.id, allowedDomains: [] });
        await readySite('checkout');
      } finally {
        await first.stop().catch(() => {});
        await second.stop();
        await api.close();
        ctx.running = await startTestOperator(ctx.target);
      }
    });
  });

  describe('probes and metrics', () => {
    it('serves /healthz, /readyz and /metrics with the reconcile counters, durations and queue depth, and no object names', async () => {
      await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: [] });
      await readySite('storefront');
      const base = `http://127.0.0.1:${ctx.running.operator.port}`;
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
      const readiness = await fetch(`${base}/readyz`);
      expect(readiness.status).to.equal(200);
      expect(await readiness.json()).to.deep.equal({ status: 'ready', leader: true });
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).to.match(/viewfinder_operator_reconcile_total\{kind="Site",result="success"\} [1-9]/);
      expect(metrics).to.include('viewfinder_operator_reconcile_duration_seconds_bucket{le="0.005",kind="Site"}');
      expect(metrics).to.include('viewfinder_operator_queue_depth{kind="Site"}');
      expect(metrics).not.to.include('storefront');
      expect(metrics).not.to.include(ctx.target.namespace);
    });

    it('answers /readyz 503 ApiUnavailable while the API is unreachable though no reconcile has called it, and 200 once it answers', async () => {
      const readyz = `http://127.0.0.1:${ctx.running.operator.port}/readyz`;
      await ctx.running.api.stop();
      const unready = await fetch(readyz);
      expect(unready.status).to.equal(503);
      expect(await unready.json()).to.include({ success: false, reason: 'ApiUnavailable' });
      await ctx.running.api.start();
      expect((await fetch(readyz)).status).to.equal(200);
    });
  });
});

describe('operator against the fake API server: broken watches, outages, resync, losing the Lease', function () {
  this.timeout(60_000);
  const ctx = useOperator(() => startFakeTarget());

  const siteReady = (name: string) =>
    waitFor(`Site ${name} Ready`, async () => ready(await ctx.kube.get<SiteResource>('Site', name))?.status === 'True');

  it('relists after 410 Gone and still sees later changes', async () => {
    const fake = ctx.target.fake!;
    const listsBefore = ctx.running.operator.informers.map((informer) => informer.lists);
    fake.compact();
    fake.dropWatches();
    await waitFor('every informer to relist', () => ctx.running.operator.informers.every((informer, index) => informer.lists > (listsBefore[index] as number)));
    await ctx.kube.createSite('after-gone', { account: ctx.account.id, allowedDomains: [] });
    await siteReady('after-gone');
  });

  it('reconnects a dropped watch from its resourceVersion, without relisting', async () => {
    const fake = ctx.target.fake!;
    const watchesBefore = fake.watchRequests.sites ?? 0;
    const listsBefore = ctx.running.operator.informers.map((informer) => informer.lists);
    fake.dropWatches();
    await waitFor('the Site watch to reconnect', () => (fake.watchRequests.sites ?? 0) > watchesBefore);
    await ctx.kube.createSite('after-drop', { account: ctx.account.id, allowedDomains: [] });
    await siteReady('after-drop');
    expect(ctx.running.operator.informers.map((informer) => informer.lists)).to.deep.equal(listsBefore);
  });

  it('keeps retrying a failing list with backoff until the API server answers', async () => {
    await ctx.running.stop();
    ctx.target.fake!.failNext(3, 503, (method, url) => method === 'GET' && url.endsWith('/sites'));
    ctx.running = await startTestOperator(ctx.target);
    ctx.account = await ctx.running.store.createAccount({ name: 'Acme' });
    await ctx.kube.createSite('after-outage', { account: ctx.account.id, allowedDomains: [] });
    await siteReady('after-outage');
  });

  it('reports ApiUnavailable while the API answers 5xx, then Ready, with no duplicate site or key', async () => {
    await ctx.running.stop();
    // Every call is reviewed afresh, so that the Kubernetes API's failures reach the API's answers.
    ctx.running = await startTestOperator(ctx.target, { apiEnv: { TOKEN_REVIEW_CACHE_SECONDS: '0' } });
    ctx.account = await ctx.running.store.createAccount({ name: 'Acme' });
    // Callers of one token share the review on its way (auth/operator-token.ts), so the operator's concurrent
    // calls use up fewer failures than they make: 10 keep it ApiUnavailable long enough to be seen.
    ctx.target.fake!.failNext(10, 503, (method, url) => method === 'POST' && url.endsWith('/tokenreviews'));
    await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: ['example.com'] });
    await ctx.kube.createApiKey('widget', { account: ctx.account.id, siteRef: 'storefront' });
    const condition = await waitFor('Site storefront ApiUnavailable', async () => {
      const found = ready(await ctx.kube.get<SiteResource>('Site', 'storefront'));
      return found?.reason === 'ApiUnavailable' ? found : undefined;
    });
    expect(condition.message).to.match(/^The API answered 503: Cannot review the token/);
    await siteReady('storefront');
    await waitFor('ApiKey widget Ready', async () => ready(await ctx.kube.get<ApiKeyResource>('ApiKey', 'widget'))?.status === 'True');
    expect(await ctx.running.store.listSites(ctx.account.id)).to.have.length(1);
    const keys = await ctx.running.store.listKeys(ctx.account.id);
    expect(keys).to.have.length(1);
    expect((await ctx.running.store.findKeyByHash(hashApiKey((await ctx.kube.secretKey('widget')) as string)))?.id).to.equal(keys[0]?.id);
  });

  it('never logs a key, even at trace level, through issue, rotation, a lost Secret and revocation', async () => {
    await ctx.running.stop();
    const { logger, lines } = capturedLogger();
    ctx.running = await startTestOperator(ctx.target, { logger });
    ctx.account = await ctx.running.store.createAccount({ name: 'Acme' });
    const keys: string[] = [];
    const signingSecrets: string[] = [];
    const nextKey = async () => {
      const key = await waitFor('a new key in the Secret', async () => {
        const current = await ctx.kube.secretKey('widget');
        return current !== undefined && !keys.includes(current) ? current : undefined;
      });
      signingSecrets.push((await ctx.kube.secretField('widget', 'signingSecret')) as string);
      return key;
    };
    await ctx.kube.createApiKey('widget', { account: ctx.account.id });
    keys.push(await nextKey());
    await ctx.kube.patchSpec('ApiKey', 'widget', { rotation: 1 });
    keys.push(await nextKey());
    await ctx.kube.deleteSecret('widget');
    keys.push(await nextKey());
    await ctx.kube.delete('ApiKey', 'widget');
    await waitFor('the ApiKey to be gone', async () => (await ctx.kube.get('ApiKey', 'widget')) === undefined);
    expect(lines.some((line) => line.includes('Rotated the key'))).to.equal(true);
    expect(new Set(signingSecrets).size).to.equal(3);
    for (const key of [...keys, ...signingSecrets]) {
      expect(lines.filter((line) => line.includes(key))).to.deep.equal([]);
      expect(lines.filter((line) => line.includes(Buffer.from(key).toString('base64')))).to.deep.equal([]);
    }
  });

  it('watches every namespace when WATCH_NAMESPACE is empty', async () => {
    await ctx.running.stop();
    ctx.running = await startTestOperator(ctx.target, { env: { WATCH_NAMESPACE: '' } });
    ctx.account = await ctx.running.store.createAccount({ name: 'Acme' });
    const blog = new Resources({ ...ctx.target, namespace: 'blog' });
    await blog.createSite('journal', { account: ctx.account.id, allowedDomains: [] });
    await waitFor('the Site in another namespace to be Ready', async () => ready(await blog.get<SiteResource>('Site', 'journal'))?.status === 'True');
  });

  it('leaves namespaces it does not watch alone', async () => {
    const blog = new Resources({ ...ctx.target, namespace: 'blog' });
    await blog.createSite('journal', { account: ctx.account.id, allowedDomains: [] });
    await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: [] });
    await siteReady('storefront');
    expect((await blog.get<SiteResource>('Site', 'journal'))?.status).to.equal(undefined);
    expect(await ctx.running.store.findSiteByManagedBy({ kind: 'Site', namespace: 'blog', name: 'journal' })).to.equal(null);
  });

  it('releases the Lease when it stops, so that another replica need not wait for it to expire', async () => {
    await waitFor('the operator to lead', () => ctx.running.operator.isLeader());
    const leaseName = ctx.running.config.leaderElection.leaseName;
    expect(ctx.target.fake!.get('leases', ctx.target.namespace, leaseName)?.spec).to.include({ holderIdentity: ctx.running.config.leaderElection.identity });
    await ctx.running.stop();
    expect(ctx.target.fake!.get('leases', ctx.target.namespace, leaseName)?.spec).to.include({ holderIdentity: '' });
    ctx.running = await startTestOperator(ctx.target);
  });

  it('steps down when it cannot renew the Lease, and leads again once it can', async () => {
    await waitFor('the operator to lead', () => ctx.running.operator.isLeader());
    // Enough failures at the 100 ms retry period to pass the 600 ms renew deadline.
    ctx.target.fake!.failNext(15, 503, (_method, url) => url.includes('/leases/'));
    await waitFor('the operator to step down', () => !ctx.running.operator.isLeader());
    expect(await ctx.running.operator.metrics.registry.getSingleMetricAsString('viewfinder_operator_leader')).to.match(/viewfinder_operator_leader 0/);
    await waitFor('the operator to lead again', () => ctx.running.operator.isLeader());
    await ctx.kube.createSite('after-step-down', { account: ctx.account.id, allowedDomains: [] });
    await siteReady('after-step-down');
  });

  it('reconciles every object again on resync, repairing a store changed behind its back', async () => {
    await ctx.running.stop();
    ctx.running = await startTestOperator(ctx.target, { env: { RESYNC_PERIOD_SECONDS: '1' } });
    ctx.account = await ctx.running.store.createAccount({ name: 'Acme' });
    await ctx.kube.createSite('storefront', { account: ctx.account.id, allowedDomains: ['example.com'] });
    await siteReady('storefront');
    const site = await ctx.kube.get<SiteResource>('Site', 'storefront');
    // Nothing changes in Kubernetes: only the periodic resync can notice this.
    await ctx.running.store.updateSite(site?.status?.siteId as string, { allowedDomains: ['evil.example'] });
    await waitFor(
      'the resync to restore the domains',
      async () => (await ctx.running.store.getSite(site?.status?.siteId as string))?.allowedDomains.join() === 'example.com',
      200,
      25,
    );
  });
});

describe("the operator's Lease, owned by its Deployment, against a real cluster (KUBECONFIG)", function () {
  this.timeout(120_000);
  if (skippedWithoutCluster("the Lease's garbage collection with its Deployment (helm uninstall)")) return;

  it('is deleted by the garbage collector with the Deployment that owns it, as helm uninstall deletes the operator\'s, even when nobody released it', async () => {
    const target = await startRealTarget();
    const { namespace } = target;
    const apps = target.kubeConfig.makeApiClient(AppsV1Api);
    const coordination = target.kubeConfig.makeApiClient(CoordinationV1Api);
    const name = 'viewfinder-operator';
    const labels = { 'app.kubernetes.io/component': 'operator' };
    // No replicas: the operator under test runs in this process; the Deployment only owns its Lease.
    const deployment = await apps.createNamespacedDeployment({
      namespace,
      body: { metadata: { name }, spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'operator', image: 'viewfinder:dev' }] } } } },
    });
    let running: RunningOperator | undefined = await startTestOperator(target, { env: { LEASE_OWNER_DEPLOYMENT: name } });
    try {
      const leaseName = running.config.leaderElection.leaseName;
      await waitFor('the operator to lead', () => running?.operator.isLeader());
      const lease = await coordination.readNamespacedLease({ namespace, name: leaseName });
      expect(lease.metadata?.ownerReferences?.map(({ apiVersion, kind, name: owner, uid }) => ({ apiVersion, kind, name: owner, uid }))).to.deep.equal([
        { apiVersion: 'apps/v1', kind: 'Deployment', name, uid: deployment.metadata?.uid },
      ]);
      // As during helm uninstall, where the release fails for want of RBAC: the Lease still names its holder.
      await running.stop({ release: false });
      running = undefined;
      await apps.deleteNamespacedDeployment({ namespace, name });
      await waitFor(
        'the garbage collector to delete the Lease',
        () => coordination.readNamespacedLease({ namespace, name: leaseName }).then(() => false, (err: unknown) => httpStatusOf(err) === 404),
        600,
        100,
      );
    } finally {
      await running?.stop();
      await target.close();
    }
  });
});
