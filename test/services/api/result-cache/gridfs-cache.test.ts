import { openGridFsCache, type GridFsCache } from '../../../../services/api/src/result-cache/gridfs-cache.ts';
import { describeOnMongo, freshMongoUri } from '../../../support/store-backends.ts';
import { resultCacheConformance } from './conformance.ts';

describeOnMongo('result cache: MongoDB GridFS', (uri) => {
  resultCacheConformance(
    (maxBytes, clock) => openGridFsCache({ uri: freshMongoUri(uri, 'viewfinder_cache_test'), maxBytes, now: clock.now }),
    async (cache) => {
      await (cache as GridFsCache).dropDatabase();
      await cache.close();
    },
  );
});
