import { gridFsBlobs } from '../../support/blob-stores.ts';
import { describeOnMongo } from '../../support/store-backends.ts';
import { blobStoreConformance } from './conformance.ts';

describeOnMongo('blob store: MongoDB GridFS', (uri) => {
  blobStoreConformance(gridFsBlobs(uri));
});
