import { expect } from 'chai';
import { parseNetworkAllowlist } from '../../../../lib/network-allowlist.ts';
import { expandKey, keyTemplateProblem } from '../../../../services/api/src/storage/key-template.ts';
import { objectUrl, putObject, StorageFailure, uploadHost } from '../../../../services/api/src/storage/upload.ts';
import { createNetworkGuard } from '../../../../services/renderer/src/guard/network-guard.ts';
import { startSecretServer, type SecretServer } from '../../../support/secret-server.ts';

/** The upload's own rules, without an object store: its size bound, where it goes, and the keys it makes. */
describe('storage uploads: bounds, places and keys', () => {
  let secret: SecretServer;
  before(async () => {
    secret = await startSecretServer();
  });
  after(() => secret.close());

  const destination = (overrides = {}) => ({
    id: 'dest_x',
    accountId: 'acct_x',
    managedBy: null,
    name: 'archive',
    endpoint: `http://127.0.0.1:${secret.port}`,
    bucket: 'acme-shots',
    region: 'us-east-1',
    pathStyle: true,
    keyTemplate: '{id}.{format}',
    createdAt: new Date(),
    updatedAt: new Date(),
    ...overrides,
  });

  it('refuses an object past the size bound before resolving or connecting: too_large, for good', async () => {
    secret.reset();
    const guard = createNetworkGuard(parseNetworkAllowlist(['127.0.0.1']));
    const err = await putObject(guard, {
      destination: destination(),
      credentials: { accessKeyId: 'AKIA', secretAccessKey: 'secret' },
      key: 'big.png',
      body: Buffer.alloc(11),
      contentType: 'image/png',
      timeoutMs: 1000,
      maxBytes: 10,
    }).then(
      () => undefined,
      (e: unknown) => e as StorageFailure,
    );
    expect(err).to.be.instanceOf(StorageFailure);
    expect(err).to.include({ outcome: 'too_large', permanent: true });
    expect(err?.message).to.equal('the capture is 11 bytes, more than the 10 an upload may write (STORAGE_MAX_UPLOAD_MB)');
    expect(secret.hits()).to.equal(0);
  });

  it('writes to endpoint/bucket/key in path style and to bucket.endpoint/key otherwise, each segment encoded once', () => {
    expect(objectUrl(destination({ endpoint: 'https://s3.example.com/base' }), 'shots/a=b+c.png').href).to.equal('https://s3.example.com/base/acme-shots/shots/a%3Db%2Bc.png');
    expect(objectUrl(destination({ endpoint: 'https://s3.example.com', pathStyle: false }), 'k.png').href).to.equal('https://acme-shots.s3.example.com/k.png');
    expect(uploadHost(destination({ endpoint: 'https://s3.example.com', pathStyle: false }))).to.equal('acme-shots.s3.example.com');
  });

  it('fills {id}, {date} and {format} in, and refuses templates that could make an unsafe key', () => {
    expect(expandKey('shots/{date}/{id}.{format}', { id: 'cap_1', date: '2026-11-28', format: 'webp' })).to.equal('shots/2026-11-28/cap_1.webp');
    expect(keyTemplateProblem('shots/{date}/{id}.{format}', 'keyTemplate')).to.equal(undefined);
    expect(keyTemplateProblem('fixed-name.png', 'keyTemplate'), 'a fixed key is allowed: each capture replaces the last').to.equal(undefined);
    for (const bad of ['/{id}', '{id}//x', '.hidden/{id}', 'a/../{id}', 'a b/{id}', '{id', '{ID}']) expect(keyTemplateProblem(bad, 'keyTemplate'), bad).to.be.a('string');
  });
});
