import { expect } from 'chai';
import { hashApiKey } from '../../../lib/api-keys.ts';
import { reconcileApiKey } from '../../../operator/src/controllers/api-key.ts';
import { reconcileSite } from '../../../operator/src/controllers/site.ts';
import type { ApiKeyResource } from '../../../operator/src/resources.ts';
import { ready } from '../support.ts';
import { startReconcileBench, type ReconcileBench } from './support.ts';

describe('ApiKey reconcile', () => {
  let bench: ReconcileBench;
  beforeEach(async () => {
    bench = await startReconcileBench();
  });
  afterEach(() => bench.close());

  const reconcile = () => reconcileApiKey(bench.deps, bench.namespace, 'widget');
  const stored = () => bench.store.findKeyByManagedBy({ kind: 'ApiKey', namespace: bench.namespace, name: 'widget' });

  it('writes nothing on a second pass: same key, same Secret, same status', async () => {
    await bench.kube.createApiKey('widget', { account: bench.account.id });
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    const resource = await bench.kube.get<ApiKeyResource>('ApiKey', 'widget');
    const secret = await bench.kube.secret('widget');
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect((await bench.kube.get<ApiKeyResource>('ApiKey', 'widget'))?.metadata.resourceVersion).to.equal(resource?.metadata.resourceVersion);
    expect((await bench.kube.secret('widget'))?.metadata?.resourceVersion).to.equal(secret?.metadata?.resourceVersion);
  });

  it('regenerates when the Secret holds a key that is no longer the store key (a crash between the two writes)', async () => {
    await bench.kube.createApiKey('widget', { account: bench.account.id });
    await reconcile();
    const key = await stored();
    await bench.store.regenerateKey(key?.id as string);
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    const plaintext = (await bench.kube.secretKey('widget')) as string;
    expect((await bench.store.findKeyByHash(hashApiKey(plaintext)))?.id).to.equal(key?.id);
  });

  it('moves the key to a site when siteRef is set later, keeping the same key and Secret', async () => {
    await bench.kube.createApiKey('widget', { account: bench.account.id });
    await reconcile();
    const before = await bench.kube.secretKey('widget');
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: [] });
    await reconcileSite(bench.deps, bench.namespace, 'storefront');
    await bench.kube.patchSpec('ApiKey', 'widget', { siteRef: 'storefront', restrictDomains: true });
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect(await stored()).to.include({ kind: 'site', restrictDomains: true });
    expect(await bench.kube.secretKey('widget')).to.equal(before);
  });

  it('moves the same key to the new Secret when secretName changes, deleting the old one it owned', async () => {
    await bench.kube.createApiKey('widget', { account: bench.account.id });
    await reconcile();
    const before = await bench.kube.secretKey('widget');
    const signingBefore = await bench.kube.secretField('widget', 'signingSecret');
    const rotatedAt = (await bench.kube.get<ApiKeyResource>('ApiKey', 'widget'))?.status?.lastRotatedAt;
    await bench.kube.patchSpec('ApiKey', 'widget', { secretName: 'widget-key' });
    bench.deps.now = () => new Date('2026-02-01T00:00:00Z');
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect(await bench.kube.secret('widget')).to.equal(undefined);
    expect(await bench.kube.secretKey('widget-key')).to.equal(before);
    expect(signingBefore).to.be.a('string');
    expect(await bench.kube.secretField('widget-key', 'signingSecret')).to.equal(signingBefore);
    expect((await bench.store.findKeyByHash(hashApiKey(before as string)))?.id).to.equal((await stored())?.id);
    expect((await bench.kube.get<ApiKeyResource>('ApiKey', 'widget'))?.status).to.include({ secretName: 'widget-key', lastRotatedAt: rotatedAt });
  });

  it('ends in AccountMismatch when siteRef names a Site of another account', async () => {
    const other = await bench.store.createAccount({ name: 'Other' });
    await bench.kube.createSite('storefront', { account: other.id, allowedDomains: [] });
    await reconcileSite(bench.deps, bench.namespace, 'storefront');
    await bench.kube.createApiKey('widget', { account: bench.account.id, siteRef: 'storefront' });
    expect(await reconcile()).to.deep.equal({ outcome: 'not_ready', retry: true });
    expect(ready(await bench.kube.get<ApiKeyResource>('ApiKey', 'widget'))).to.include({ status: 'False', reason: 'AccountMismatch' });
    expect(await stored()).to.equal(null);
  });

  it('records one Warning event per new failure, not one per retry', async () => {
    await bench.kube.createApiKey('widget', { account: bench.account.id, siteRef: 'missing' });
    await reconcile();
    await reconcile();
    await reconcile();
    const warnings = (await bench.kube.events()).filter((event) => event.reason === 'SiteNotFound');
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include({ type: 'Warning', object: 'ApiKey/widget' });
  });

  it('revokes an orphaned store key whose ApiKey is gone', async () => {
    await bench.store.upsertManagedKey({
      accountId: bench.account.id,
      name: 'x',
      kind: 'full',
      managedBy: { kind: 'ApiKey', namespace: bench.namespace, name: 'widget', uid: 'u' },
    });
    expect(await reconcile()).to.deep.equal({ outcome: 'deleted' });
    expect(await stored()).to.equal(null);
  });
});
