import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BlobStore } from '../../lib/blobs/blob-store.ts';
import { openDirectoryBlobStore } from '../../lib/blobs/directory-blob-store.ts';
import { describeOnS3, freshBucket, type TestS3 } from './object-store.ts';
import { describeOnMongo, freshMongoUri } from './store-backends.ts';

/** One empty blob store for one test: the environment an API process needs to use it, a handle on it, and its removal (which closes the handle). */
export interface TestBlobStore {
  env: Record<string, string>;
  blobs: BlobStore;
  dispose(): Promise<void>;
}

export interface BlobStoreBackend {
  /** For test titles: "a directory", "GridFS", "S3 (versitygw)". */
  name: string;
  create(): Promise<TestBlobStore>;
}

export const directoryBlobs: BlobStoreBackend = {
  name: 'a directory',
  async create() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-blobs-'));
    const blobs = await openDirectoryBlobStore({ dir });
    return {
      env: { BLOB_STORE: 'directory', BLOB_DIR: dir },
      blobs,
      async dispose() {
        await blobs.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export function gridFsBlobs(uri: string): BlobStoreBackend {
  return {
    name: 'GridFS',
    async create() {
      const { openGridFsBlobStore } = await import('../../lib/blobs/gridfs-blob-store.ts');
      const database = freshMongoUri(uri, 'viewfinder_test_blobs');
      const blobs = await openGridFsBlobStore({ uri: database });
      return {
        env: { BLOB_STORE: 'gridfs', MONGODB_URI: database },
        blobs,
        async dispose() {
          await blobs.dropDatabase();
          await blobs.close();
        },
      };
    },
  };
}

export function s3Blobs(s3: TestS3): BlobStoreBackend {
  return {
    name: 'S3 (versitygw)',
    async create() {
      const { openS3BlobStore } = await import('../../lib/blobs/s3-blob-store.ts');
      const bucket = await freshBucket(s3);
      return { env: bucket.env, blobs: await openS3BlobStore(bucket.options), dispose: bucket.dispose };
    },
  };
}

/**
 * Runs `body` once per blob store implementation, each in a describe of its own ("… on S3
 * (versitygw)"); the GridFS and S3 ones skip, saying why, when their server is not there.
 */
export function forEachBlobStore(title: string, body: (this: Mocha.Suite, backend: BlobStoreBackend) => void): void {
  describe(`${title} on ${directoryBlobs.name}`, function () {
    body.call(this, directoryBlobs);
  });
  describeOnMongo(`${title} on GridFS`, function (uri) {
    body.call(this, gridFsBlobs(uri));
  });
  describeOnS3(`${title} on S3 (versitygw)`, function (s3) {
    body.call(this, s3Blobs(s3));
  });
}
