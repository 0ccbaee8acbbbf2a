import { expect } from 'chai';
import { openS3BlobStore } from '../../../lib/blobs/s3-blob-store.ts';
import { reconcileSite } from '../../../operator/src/controllers/site.ts';
import type { SiteResource, SiteStorageSpec } from '../../../operator/src/resources.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { sharedRenderer } from '../../support/harness.ts';
import { describeOnS3, freshBucket } from '../../support/object-store.ts';
import { ready } from '../support.ts';
import { startReconcileBench, type ReconcileBench } from './support.ts';

/**
 * A Site's spec.storage (issue #43): the operator keeps a storage destination of the account, owned
 * by the Site, with the keys of the Secret it names; a new version of the Secret rotates them, and
 * removing the field or the Site removes the destination. The management API refuses to change or
 * delete it (test/services/api/storage/destinations.test.ts).
 */
const KEYS = { accessKeyId: 'AKIASITESTORAGE00001', secretAccessKey: 'site-storage-secret/+=0123456789' };
const ROTATED = { accessKeyId: 'AKIASITESTORAGE00002', secretAccessKey: 'rotated-secret/+=9876543210' };
const ref = (namespace: string) => ({ kind: 'Site' as const, namespace, name: 'storefront' });

describe('Site reconcile: spec.storage', function () {
  this.timeout(30_000);
  let bench: ReconcileBench;
  beforeEach(async () => {
    bench = await startReconcileBench();
  });
  afterEach(() => bench.close());

  // A public address literal: the guard checks it without DNS, and nothing is ever sent to it here.
  const storage = (overrides: Partial<SiteStorageSpec> = {}): SiteStorageSpec => ({
    name: 'archive',
    endpoint: 'http://8.8.8.8:9000/',
    bucket: 'acme-shots',
    pathStyle: true,
    keyTemplate: 'shots/{date}/{id}.{format}',
    credentialsSecretRef: { name: 'bucket-keys' },
    ...overrides,
  });
  const reconcile = () => reconcileSite(bench.deps, bench.namespace, 'storefront');
  const site = () => bench.kube.get<SiteResource>('Site', 'storefront');
  const stored = () => bench.store.findDestinationByManagedBy(ref(bench.namespace));
  const credentials = () => bench.store.getDestinationCredentials(bench.account.id, 'archive');

  it('creates the destination, owned by the Site, with the Secret\'s keys; says so in the status; writes nothing when run again', async () => {
    await bench.kube.createSecret('bucket-keys', KEYS);
    await bench.kube.createSite('storefront', { account: bench.account.id, allowedDomains: ['example.com'], storage: storage() });
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    const destination = await stored();
    const resource = await site();
    expect(destination).to.deep.include({
      accountId: bench.account.id,
      name: 'archive',
      endpoint: 'http://8.8.8.8:9000',
      bucket: 'acme-shots',
      region: 'us-east-1',
      pathStyle: true,
      keyTemplate: 'shots/{date}/{id}.{format}',
      managedBy: { kind: 'Site', namespace: bench.namespace, name: 'storefront', uid: resource?.metadata.uid },
    });
    expect(await credentials()).to.deep.equal(KEYS);
    const secret = await bench.kube.secret('bucket-keys');
    expect(resource?.status?.storage).to.deep.equal({ destination: 'archive', credentialsVersion: `${secret?.metadata?.uid}/${secret?.metadata?.resourceVersion}` });
    expect(ready(resource)?.message).to.match(/; storage destination archive writes to bucket acme-shots$/);
    expect(JSON.stringify(resource)).to.not.include(KEYS.secretAccessKey);

    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect((await site())?.metadata.resourceVersion).to.equal(resource?.metadata.resourceVersion);
    expect((await stored())?.updatedAt).to.deep.equal(destination?.updatedAt);
  });

  it("rotates the keys when the Secret changes, and follows a change of the spec's fields", async () => {
    await bench.kube.createSecret('bucket-keys', KEYS);
    await bench.kube.createSite('storefront', { account: bench.account.id, storage: storage() });
    await reconcile();
    await bench.kube.replaceSecretData('bucket-keys', ROTATED);
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect(await credentials()).to.deep.equal(ROTATED);
    const secret = await bench.kube.secret('bucket-keys');
    expect((await site())?.status?.storage?.credentialsVersion).to.equal(`${secret?.metadata?.uid}/${secret?.metadata?.resourceVersion}`);

    await bench.kube.patchSpec('Site', 'storefront', { storage: { bucket: 'moved', region: 'eu-west-1' } });
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect(await stored()).to.deep.include({ bucket: 'moved', region: 'eu-west-1', name: 'archive' });
    expect(await credentials()).to.deep.equal(ROTATED);
  });

  it('deletes the destination when spec.storage is removed, and with the Site', async () => {
    await bench.kube.createSecret('bucket-keys', KEYS);
    await bench.kube.createSite('storefront', { account: bench.account.id, storage: storage() });
    await reconcile();
    await bench.kube.patchSpec('Site', 'storefront', { storage: null });
    expect(await reconcile()).to.deep.equal({ outcome: 'success' });
    expect(await stored()).to.equal(null);
    const resource = await site();
    expect(resource?.status).to.not.have.property('storage');
    expect(ready(resource)).to.include({ status: 'True', reason: 'Reconciled' });

    await bench.kube.patchSpec('Site', 'storefront', { storage: storage() });
    await reconcile();
    expect(await stored()).to.not.equal(null);
    await bench.kube.delete('Site', 'storefront');
    expect(await reconcile()).to.deep.equal({ outcome: 'deleted' });
    expect(await stored()).to.equal(null);
    expect(await bench.store.findSiteByManagedBy(ref(bench.namespace))).to.equal(null);
  });

  it('waits in CredentialsNotFound for a missing Secret, and in InvalidSpec (no retry) for one without the keys, with a Warning event each', async () => {
    await bench.kube.createSite('storefront', { account: bench.account.id, storage: storage() });
    expect(await reconcile()).to.deep.equal({ outcome: 'not_ready', retry: true });
    expect(ready(await site())).to.include({ status: 'False', reason: 'CredentialsNotFound', message: `spec.storage.credentialsSecretRef: Secret ${bench.namespace}/bucket-keys does not exist` });
    await bench.kube.createSecret('bucket-keys', { accessKeyId: KEYS.accessKeyId });
    expect(await reconcile()).to.deep.equal({ outcome: 'not_ready', retry: false });
    expect(ready(await site())).to.include({ reason: 'InvalidSpec', message: `spec.storage.credentialsSecretRef: Secret ${bench.namespace}/bucket-keys has no key secretAccessKey` });
    expect(await stored()).to.equal(null);
    const reasons = (await bench.kube.events()).map((event) => `${event.type} ${event.reason}`);
    expect(reasons).to.include.members(['Warning CredentialsNotFound', 'Warning InvalidSpec']);
  });

  it("ends in DestinationConflict when the account has another destination of that name, and in InvalidSpec when the guard refuses the endpoint", async () => {
    await bench.kube.createSecret('bucket-keys', KEYS);
    await bench.store.createDestination({ accountId: bench.account.id, name: 'archive', endpoint: 'http://8.8.4.4', bucket: 'theirs', region: 'us-east-1', pathStyle: true, keyTemplate: '{id}.{format}', credentials: ROTATED });
    await bench.kube.createSite('storefront', { account: bench.account.id, storage: storage() });
    expect(await reconcile()).to.deep.equal({ outcome: 'not_ready', retry: false });
    expect(ready(await site())).to.include({ reason: 'DestinationConflict', message: 'spec.storage.name: A storage destination named archive already exists in this account' });
    expect((await bench.store.getDestination(bench.account.id, 'archive'))?.managedBy).to.equal(null);

    await bench.kube.patchSpec('Site', 'storefront', { storage: { name: 'metadata', endpoint: 'http://169.254.169.254/' } });
    expect(await reconcile()).to.deep.equal({ outcome: 'not_ready', retry: false });
    const condition = ready(await site());
    expect(condition).to.include({ reason: 'InvalidSpec' });
    expect(condition?.message).to.match(/^spec\.storage\.endpoint: storage endpoint refused: .*link-local/);
    expect(await stored()).to.equal(null);
  });
});

/** The keys the operator sent are the ones the upload signs with: a real capture lands in the bucket, and a rotation takes effect. */
describeOnS3('Site spec.storage: a capture written with the Secret\'s keys (versitygw, real Chromium)', function (s3) {
  this.timeout(90_000);
  let bench: ReconcileBench;
  let fixtures: FixtureServer;
  let bucket: Awaited<ReturnType<typeof freshBucket>>;
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    bucket = await freshBucket(s3);
    bench = await startReconcileBench({ renderer: await sharedRenderer(), env: { STORAGE_ENDPOINT_ALLOWLIST: new URL(s3.endpoint).hostname, STORAGE_UPLOAD_TIMEOUT_MS: '5000' } });
  });
  afterEach(async () => {
    await bench.close();
    await bucket.dispose();
  });

  it('captures into the bucket, fails with the destination\'s words after the Secret gets wrong keys, and works again once they are fixed', async () => {
    const { key } = await bench.store.createKey({ accountId: bench.account.id, name: 'admin', kind: 'full', siteId: null, restrictDomains: false, unsignedLinks: false }).then((issued) => ({ key: issued.secret }));
    await bench.kube.createSecret('bucket-keys', { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
    await bench.kube.createSite('storefront', {
      account: bench.account.id,
      allowedDomains: ['127.0.0.1'],
      storage: { name: 'archive', endpoint: s3.endpoint, bucket: bucket.options.bucket, region: s3.region, pathStyle: true, credentialsSecretRef: { name: 'bucket-keys' } },
    });
    expect(await reconcileSite(bench.deps, bench.namespace, 'storefront')).to.deep.equal({ outcome: 'success' });
    const siteId = (await bench.kube.get<SiteResource>('Site', 'storefront'))?.status?.siteId;
    const capture = () =>
      fetch(new URL('/api/screenshot', bench.api.url), {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: fixtures.url('/geometry'), site_id: siteId, storage: { destination: 'archive' } }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));

    const first = await capture();
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.not.have.property('image');
    expect(first.body.storage.key).to.match(/^cap_[0-9a-f]{24}\.png$/);
    const objects = await openS3BlobStore(bucket.options);
    expect((await objects.getBuffer(first.body.storage.key))?.info.contentType).to.equal('image/png');

    await bench.kube.replaceSecretData('bucket-keys', { accessKeyId: s3.accessKeyId, secretAccessKey: 'wrong-secret-0123456789abcdef' });
    await reconcileSite(bench.deps, bench.namespace, 'storefront');
    const refused = await capture();
    expect(refused.status).to.equal(502);
    expect(refused.body.error).to.match(/^storage destination .* answered 403 SignatureDoesNotMatch/);
    expect(JSON.stringify(refused.body)).to.not.include('wrong-secret');

    await bench.kube.replaceSecretData('bucket-keys', { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
    await reconcileSite(bench.deps, bench.namespace, 'storefront');
    expect((await capture()).status).to.equal(200);
  });
});
