import { expect } from 'chai';
import { reconcileSite } from '../../../operator/src/controllers/site.ts';
import { httpStatusOf } from '../../../lib/k8s/api-errors.ts';
import type { SiteResource } from '../../../operator/src/resources.ts';
import { ready } from '../support.ts';
import { startReconcileBench, type ReconcileBench } from './support.ts';

describe('Site reconcile', () => {
  let bench: ReconcileBench;
  beforeEach(async () => {
    bench = await startReconcileBench();
  });
  afterEach(() => bench.close());

  const reconcile = () => reconcileSite(bench.deps, bench.namespace, 'storefront');
  const stored = () => bench.store.findSiteByManagedBy({ kind: 'Site', namespace: bench.namespace, name: 'storefront' });

  it('adds the finalizer, writes the store site and the Ready status in one pass', async () => {
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: ['Example.com.'] });
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    const site = await bench.kube.get<SiteResource>('Site', 'storefront');
    expect(site?.metadata.finalizers).to.deep.equal(['viewfinder.dev/cleanup']);
    expect((await stored())?.allowedDomains).to.deep.equal(['example.com']);
    expect(site?.status).to.deep.include({ siteId: (await stored())?.id, observedGeneration: 1 });
    expect(ready(site)).to.deep.include({ status: 'True', reason: 'Reconciled', message: `Site ${(await stored())?.id} allows example.com` });
  });

  it('writes nothing, to Kubernetes or the store, when it runs again with nothing changed', async () => {
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: ['example.com'] });
    await reconcile();
    const before = await bench.kube.get<SiteResource>('Site', 'storefront');
    const storedBefore = await stored();
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect((await bench.kube.get<SiteResource>('Site', 'storefront'))?.metadata.resourceVersion).to.equal(before?.metadata.resourceVersion);
    expect((await stored())?.updatedAt).to.deep.equal(storedBefore?.updatedAt);
  });

  it('ends in InvalidSpec, without retrying, when a domain does not normalize', async () => {
    // The CRD's pattern admits it (digits are host labels); the store's rule sees a broken IPv4 address.
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: ['999.1.1.1'] });
    expect(await reconcile()).to.deep.equal({ outcome: 'not_ready', retry: false });
    const condition = ready(await bench.kube.get<SiteResource>('Site', 'storefront'));
    expect(condition).to.include({ status: 'False', reason: 'InvalidSpec' });
    expect(condition?.message).to.match(/^spec\.allowedDomains: /);
    expect(await stored()).to.equal(null);
  });

  it('ends in AccountMismatch when the store site belongs to another account', async () => {
    const other = await bench.store.createAccount({ name: 'Other' });
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: [] });
    await reconcile();
    await bench.kube.delete('Site', 'storefront');
    await reconcile();
    await bench.store.upsertManagedSite({ accountId: other.id, name: 'x', allowedDomains: [], managedBy: { kind: 'Site', namespace: bench.namespace, name: 'storefront', uid: 'u' } });
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: [] });
    expect(await reconcile()).to.deep.equal({ outcome: 'not_ready', retry: true });
    expect(ready(await bench.kube.get<SiteResource>('Site', 'storefront'))).to.include({ reason: 'AccountMismatch' });
  });

  it('removes a store site whose Site is gone without a finalizer (an orphan), and succeeds when there is nothing to remove', async () => {
    await bench.store.upsertManagedSite({ accountId: bench.account.id, name: 'x', allowedDomains: [], managedBy: { kind: 'Site', namespace: bench.namespace, name: 'storefront', uid: 'u' } });
    expect(await reconcile()).to.deep.equal({ outcome: 'deleted' });
    expect(await stored()).to.equal(null);
    expect(await reconcile()).to.deep.equal({ outcome: 'deleted' });
  });

  it('leaves a conflict to the queue (a 409 from the finalizer update) without a False condition', async () => {
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: [] });
    bench.fake.failNext(1, 409, (method) => method === 'PUT');
    const failure = await reconcile().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(httpStatusOf(failure)).to.equal(409);
    expect(ready(await bench.kube.get<SiteResource>('Site', 'storefront'))).to.equal(undefined);
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
  });
});
