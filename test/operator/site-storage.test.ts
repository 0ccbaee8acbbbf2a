import { expect } from 'chai';
import type { Account } from '../../lib/store/store.ts';
import type { SiteResource } from '../../operator/src/resources.ts';
import { Resources, describeOnEachTarget, ready, startTestOperator, waitFor, type KubeTarget, type RunningOperator } from './support.ts';

/**
 * A Site's spec.storage through the whole operator (informers, queue, resync), as main.ts wires it
 * (issue #43): the destination appears owned by the Site; a new version of its Secret, which the
 * operator does not watch, reaches the API at the resync (RESYNC_PERIOD_SECONDS, 1 s here); deleting
 * the Site deletes the destination. The in-process fake always, a real cluster when KUBECONFIG is set.
 */
describeOnEachTarget('operator: Site spec.storage', 90_000, (start) => {
  const KEYS = { accessKeyId: 'AKIAOPERATORSTORAGE1', secretAccessKey: 'operator-storage-secret/+=0123' };
  const ROTATED = { accessKeyId: 'AKIAOPERATORSTORAGE2', secretAccessKey: 'rotated-operator-secret/+=4567' };
  let target: KubeTarget;
  let running: RunningOperator;
  let kube: Resources;
  let account: Account;
  beforeEach(async () => {
    target = await start();
    running = await startTestOperator(target, { env: { RESYNC_PERIOD_SECONDS: '1' } });
    kube = new Resources(target);
    account = await running.store.createAccount({ name: 'Acme' });
  });
  afterEach(async function () {
    this.timeout(180_000);
    await running.stop();
    await target.close();
  });

  const ref = () => ({ kind: 'Site' as const, namespace: target.namespace, name: 'storefront' });
  const credentials = () => running.store.getDestinationCredentials(account.id, 'archive');

  it('keeps the destination with the Secret\'s keys, rotates them at the resync after the Secret changes, and deletes it with the Site', async () => {
    await kube.createSecret('bucket-keys', KEYS);
    await kube.createSite('storefront', {
      account: account.id,
      allowedDomains: ['example.com'],
      // A public address literal: the API's guard admits it without DNS; nothing is sent to it.
      storage: { name: 'archive', endpoint: 'http://8.8.8.8:9000', bucket: 'acme-shots', pathStyle: true, credentialsSecretRef: { name: 'bucket-keys' } },
    });
    const site = await waitFor('Site storefront Ready with its destination', async () => {
      const resource = await kube.get<SiteResource>('Site', 'storefront');
      return ready(resource)?.status === 'True' && resource?.status?.storage ? resource : undefined;
    });
    expect(ready(site)?.message).to.match(/; storage destination archive writes to bucket acme-shots$/);
    expect(await running.store.findDestinationByManagedBy(ref())).to.deep.include({
      accountId: account.id,
      name: 'archive',
      region: 'us-east-1',
      keyTemplate: '{id}.{format}',
      managedBy: { ...ref(), uid: site.metadata.uid },
    });
    expect(await credentials()).to.deep.equal(KEYS);

    await kube.replaceSecretData('bucket-keys', ROTATED);
    await waitFor('the rotated keys in the API', async () => JSON.stringify(await credentials()) === JSON.stringify(ROTATED), 400);

    await kube.delete('Site', 'storefront');
    await waitFor('the destination deleted with the Site', async () => (await running.store.findDestinationByManagedBy(ref())) === null, 400);
    await waitFor('the Site gone', async () => (await kube.get<SiteResource>('Site', 'storefront')) === undefined, 400);
  });
});
