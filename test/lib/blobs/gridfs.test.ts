import { randomBytes } from 'node:crypto';
import { openGridFsBlobStore, type GridFsBlobStore } from '../../../lib/blobs/gridfs-blob-store.ts';
import { describeOnMongo } from '../../support/store-backends.ts';
import { blobStoreConformance } from './conformance.ts';

describeOnMongo('blob store: MongoDB GridFS', (uri) => {
  blobStoreConformance(
    () => openGridFsBlobStore({ uri, dbName: `viewfinder_test_blobs_${randomBytes(6).toString('hex')}` }),
    async (store) => {
      await (store as GridFsBlobStore).dropDatabase();
      await store.close();
    },
  );
});
