import { expect } from 'chai';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
import { httpStatusOf } from '../../lib/k8s/api-errors.ts';
import { startFakeKubeApiServer, type FakeKubeApiServer } from './fake-kube-apiserver.ts';

/** The fake API server behaves as the real one does in what the operator relies on. */
describe('fake Kubernetes API server', () => {
  let fake: FakeKubeApiServer;
  let custom: CustomObjectsApi;
  const sites = { group: 'viewfinder.dev', version: 'v1alpha1', namespace: 'shop', plural: 'sites' };
  const site = (name: string, spec: object = { account: 'acct_1' }) => ({ apiVersion: 'viewfinder.dev/v1alpha1', kind: 'Site', metadata: { name }, spec });
  const rejection = (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err);

  beforeEach(async () => {
    fake = await startFakeKubeApiServer({ historyLimit: 3 });
    custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
  });
  afterEach(() => fake.close());

  it('creates with a uid, generation 1 and the CRD defaults, and answers 409 to a second create', async () => {
    const created = await custom.createNamespacedCustomObject({ ...sites, body: site('a') });
    expect(created.metadata).to.include({ name: 'a', namespace: 'shop', generation: 1 });
    expect(created.metadata.uid).to.be.a('string');
    expect(created.spec).to.deep.equal({ account: 'acct_1', allowedDomains: [] });
    expect(httpStatusOf(await rejection(custom.createNamespacedCustomObject({ ...sites, body: site('a') })))).to.equal(409);
  });

  it('rejects an object the CRD schema rejects with 422', async () => {
    const err = await rejection(custom.createNamespacedCustomObject({ ...sites, body: site('a', { account: 'acct_1', allowedDomains: ['https://x.com/'] }) }));
    expect(httpStatusOf(err)).to.equal(422);
  });

  it('serves PageMonitors in viewfinder.dev, validated against their CRD, with a status subresource', async () => {
    const monitors = { ...sites, plural: 'pagemonitors' };
    const monitor = (compare: object) => ({
      apiVersion: 'viewfinder.dev/v1alpha1',
      kind: 'PageMonitor',
      metadata: { name: 'm' },
      spec: { account: 'acct_1', schedule: '@daily', compare, pages: [{ name: 'home', url: 'https://shop.example/' }] },
    });
    expect(httpStatusOf(await rejection(custom.createNamespacedCustomObject({ ...monitors, body: monitor({ threshold: 2 }) })))).to.equal(422);
    const created = await custom.createNamespacedCustomObject({ ...monitors, body: monitor({ threshold: 0.01 }) });
    expect(created).to.deep.include({ kind: 'PageMonitor', apiVersion: 'viewfinder.dev/v1alpha1' });
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const patched = await custom.patchNamespacedCustomObjectStatus({ ...monitors, name: 'm', body: { status: { lastRunId: 'run_1', largestDiffRatio: 0.5 } } }, merge);
    expect(patched.status).to.deep.equal({ lastRunId: 'run_1', largestDiffRatio: 0.5 });
    expect(patched.metadata.generation).to.equal(1);
    expect((await custom.listNamespacedCustomObject(monitors)).items).to.have.length(1);
  });

  it('bumps generation on spec changes only; the status subresource changes status only', async () => {
    const created = await custom.createNamespacedCustomObject({ ...sites, body: site('a') });
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const afterStatus = await custom.patchNamespacedCustomObjectStatus({ ...sites, name: 'a', body: { status: { siteId: 's' }, spec: { account: 'ignored' } } }, merge);
    expect(afterStatus.metadata.generation).to.equal(1);
    expect(afterStatus.spec.account).to.equal('acct_1');
    expect(afterStatus.status).to.deep.equal({ siteId: 's' });
    const afterSpec = await custom.replaceNamespacedCustomObject({ ...sites, name: 'a', body: { ...afterStatus, spec: { account: 'acct_1', allowedDomains: ['x.com'] }, status: { siteId: 'ignored' } } });
    expect(afterSpec.metadata.generation).to.equal(2);
    expect(afterSpec.status).to.deep.equal({ siteId: 's' });
    expect(Number(afterSpec.metadata.resourceVersion)).to.be.greaterThan(Number(created.metadata.resourceVersion));
  });

  it('answers 409 to an update with a stale resourceVersion', async () => {
    const created = await custom.createNamespacedCustomObject({ ...sites, body: site('a') });
    await custom.replaceNamespacedCustomObject({ ...sites, name: 'a', body: { ...created, spec: { account: 'acct_1', allowedDomains: ['x.com'] } } });
    const err = await rejection(custom.replaceNamespacedCustomObject({ ...sites, name: 'a', body: { ...created, spec: { account: 'acct_1', allowedDomains: ['y.com'] } } }));
    expect(httpStatusOf(err)).to.equal(409);
  });

  it('only marks an object with finalizers deleted, and deletes it when the last finalizer goes', async () => {
    await custom.createNamespacedCustomObject({ ...sites, body: { ...site('a'), metadata: { name: 'a', finalizers: ['x/y'] } } });
    await custom.deleteNamespacedCustomObject({ ...sites, name: 'a' });
    const marked = await custom.getNamespacedCustomObject({ ...sites, name: 'a' });
    expect(marked.metadata.deletionTimestamp).to.be.a('string');
    await custom.replaceNamespacedCustomObject({ ...sites, name: 'a', body: { ...marked, metadata: { ...marked.metadata, finalizers: [] } } });
    expect(httpStatusOf(await rejection(custom.getNamespacedCustomObject({ ...sites, name: 'a' })))).to.equal(404);
  });

  it('garbage-collects the objects that name a deleted owner in ownerReferences', async () => {
    const owner = await custom.createNamespacedCustomObject({ ...sites, body: site('owner') });
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: 'shop',
      body: { metadata: { name: 'child', ownerReferences: [{ apiVersion: 'viewfinder.dev/v1alpha1', kind: 'Site', name: 'owner', uid: owner.metadata.uid, controller: true }] }, data: {} },
    });
    await core.createNamespacedSecret({ namespace: 'shop', body: { metadata: { name: 'unrelated' }, data: {} } });
    await custom.deleteNamespacedCustomObject({ ...sites, name: 'owner' });
    expect(fake.get('secrets', 'shop', 'child')).to.equal(undefined);
    expect(fake.get('secrets', 'shop', 'unrelated')).not.to.equal(undefined);
  });

  it('streams ADDED, MODIFIED and DELETED from a resourceVersion, and 410 Gone once it fell out of the history', async () => {
    const created = await custom.createNamespacedCustomObject({ ...sites, body: site('a') });
    const from = created.metadata.resourceVersion as string;
    await custom.replaceNamespacedCustomObject({ ...sites, name: 'a', body: { ...created, spec: { account: 'acct_1', allowedDomains: ['x.com'] } } });
    await custom.deleteNamespacedCustomObject({ ...sites, name: 'a' });
    const events = await collectWatch(fake, from, 2);
    expect(events).to.deep.equal(['MODIFIED a', 'DELETED a']);

    // A history of 3 events: these 3 new ones push the first two out.
    for (const name of ['b', 'c', 'd']) await custom.createNamespacedCustomObject({ ...sites, body: site(name) });
    expect(await collectWatch(fake, from, 1)).to.deep.equal(['ERROR 410']);
  });
});

/** Watches sites from `resourceVersion` until `count` events arrived. */
function collectWatch(fake: FakeKubeApiServer, resourceVersion: string, count: number): Promise<string[]> {
  const seen: string[] = [];
  return new Promise((resolve, reject) => {
    let controller: AbortController | undefined;
    const finish = () => {
      controller?.abort();
      resolve(seen);
    };
    void new Watch(fake.kubeConfig())
      .watch(
        '/apis/viewfinder.dev/v1alpha1/namespaces/shop/sites',
        { resourceVersion },
        (type, object: { metadata?: { name?: string }; code?: number }) => {
          seen.push(type === 'ERROR' ? `ERROR ${object.code}` : `${type} ${object.metadata?.name}`);
          if (seen.length === count) finish();
        },
        (err: unknown) => (seen.length >= count ? finish() : reject(err ?? new Error(`watch ended after ${seen.join(', ')}`))),
      )
      .then((abort) => {
        controller = abort;
        if (seen.length >= count) abort.abort();
      });
  });
}
