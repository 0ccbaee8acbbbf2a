import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../../lib/env.ts';
import { describeBlobStore, lazyBlobStore, loadBlobStoreConfig } from '../../../lib/blobs/open.ts';
import { loadStoreConfig } from '../../../lib/store/open.ts';

const load = (env: Record<string, string>) => loadBlobStoreConfig(env, loadStoreConfig(env));
const S3 = { BLOB_STORE: 's3', S3_BUCKET: 'captures', S3_ACCESS_KEY_ID: 'AKIDEXAMPLE', S3_SECRET_ACCESS_KEY: 'secret-that-must-not-show' };

describe('blob store configuration (BLOB_STORE)', () => {
  it('follows the store by default: files under DATA_DIR/blobs, or GridFS beside MongoDB', () => {
    expect(load({ DATA_DIR: '/var/lib/viewfinder' })).to.deep.equal({ kind: 'directory', dir: '/var/lib/viewfinder/blobs' });
    expect(load({ MONGODB_URI: 'mongodb://db:27017/viewfinder' })).to.deep.equal({ kind: 'gridfs', mongodbUri: 'mongodb://db:27017/viewfinder', bucketName: 'blobs' });
    expect(load({ BLOB_STORE: 'directory', BLOB_DIR: '/blobs', MONGODB_URI: 'mongodb://db/' })).to.deep.equal({ kind: 'directory', dir: '/blobs' });
  });

  it('refuses GridFS without MongoDB, and an unknown kind', () => {
    expect(() => load({ BLOB_STORE: 'gridfs' })).to.throw(ConfigError, /MONGODB_URI/);
    expect(() => load({ BLOB_STORE: 'floppy' })).to.throw(ConfigError, /directory, gridfs, s3/);
  });

  it('reads S3: AWS virtual-hosted by default, path style by default with an endpoint of its own', () => {
    const aws = load({ ...S3, S3_REGION: 'eu-west-1' });
    expect(aws).to.deep.include({ kind: 's3', bucket: 'captures', region: 'eu-west-1', pathStyle: false, timeoutMs: 30_000 });
    expect(aws.kind === 's3' && aws.endpoint.href).to.equal('https://s3.eu-west-1.amazonaws.com/');
    const own = load({ ...S3, S3_ENDPOINT: 'http://minio.storage:9000' });
    expect(own).to.deep.include({ pathStyle: true, region: 'us-east-1' });
    expect(load({ ...S3, S3_ENDPOINT: 'http://minio.storage:9000', S3_PATH_STYLE: 'false' })).to.deep.include({ pathStyle: false });
  });

  it('names the missing S3 variable, and refuses an endpoint with credentials in it', () => {
    for (const name of ['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) {
      const { [name]: _left, ...env } = S3 as Record<string, string>;
      expect(() => load(env)).to.throw(ConfigError, new RegExp(name));
    }
    expect(() => load({ ...S3, S3_ENDPOINT: 'https://user:pass@s3.example.com' })).to.throw(ConfigError, /no credentials/);
    expect(() => load({ ...S3, S3_ENDPOINT: 'ftp://s3.example.com' })).to.throw(ConfigError, /http/);
  });

  it('describes each for a log line without a credential or a database URI', () => {
    expect(describeBlobStore(load({ ...S3, S3_ENDPOINT: 'http://minio.storage:9000' }))).to.equal('s3 bucket captures at http://minio.storage:9000');
    const described = describeBlobStore(load({ ...S3 }));
    expect(described).to.not.include('secret-that-must-not-show');
    expect(described).to.not.include('AKIDEXAMPLE');
    expect(describeBlobStore(load({ MONGODB_URI: 'mongodb://user:pw@db/' }))).to.equal('mongodb gridfs (bucket blobs)');
  });

  it('opens the store on first use, and tries again after an open that failed', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-lazy-blobs-'));
    try {
      const dir = path.join(root, 'blobs');
      writeFileSync(dir, 'a file where the directory should be');
      const blobs = lazyBlobStore({ kind: 'directory', dir });
      expect(blobs.describe()).to.equal(`files in ${dir}`);
      const failed = await blobs.put('a', Buffer.from('x')).then(() => undefined, (err: unknown) => err);
      expect(failed).to.be.instanceOf(Error);
      rmSync(dir);
      await blobs.put('a', Buffer.from('x'));
      expect((await blobs.getBuffer('a'))?.bytes.toString()).to.equal('x');
      await blobs.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
