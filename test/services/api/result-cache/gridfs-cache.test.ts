import { randomBytes } from 'node:crypto';
import { openGridFsCache, type GridFsCache } from '../../../../services/api/src/result-cache/gridfs-cache.ts';
import { resultCacheConformance } from './conformance.ts';

// Read here rather than through a config module: the test decides whether a server is there to use.
const MONGODB_URI = process.env.MONGODB_URI;

describe('result cache: MongoDB GridFS', function () {
  if (!MONGODB_URI) {
    it('is skipped: set MONGODB_URI to run the result cache conformance suite against MongoDB GridFS', function () {
      console.log('      (skipped: MONGODB_URI is not set, so there is no MongoDB server to test against)');
      this.skip();
    });
    return;
  }
  const uri = MONGODB_URI;
  resultCacheConformance(
    (maxBytes, clock) => openGridFsCache({ uri, dbName: `viewfinder_cache_test_${randomBytes(6).toString('hex')}`, maxBytes, now: clock.now }),
    async (cache) => {
      await (cache as GridFsCache).dropDatabase();
      await cache.close();
    },
  );
});
