import { expect } from 'chai';
import { openBlobCache } from '../../../../services/api/src/result-cache/blob-cache.ts';
import type { ResultCache } from '../../../../services/api/src/result-cache/result-cache.ts';
import { forEachBlobStore, type TestBlobStore } from '../../../support/blob-stores.ts';
import { entry, key, ManualClock, resultCacheConformance } from './conformance.ts';

forEachBlobStore('result cache in the blob store', function (backend) {
  const stores = new Map<ResultCache, TestBlobStore>();
  resultCacheConformance(
    async (maxBytes, clock) => {
      const store = await backend.create();
      const cache = await openBlobCache({ blobs: store.blobs, maxBytes, now: clock.now });
      stores.set(cache, store);
      return cache;
    },
    async (cache) => {
      const store = stores.get(cache)!;
      stores.delete(cache);
      await store.dispose();
    },
  );

  describe('beside the suite', () => {
    let store: TestBlobStore;
    beforeEach(async () => {
      store = await backend.create();
    });
    afterEach(() => store.dispose());

    it('finds what an earlier process (or another replica) wrote, and counts it against the bound', async () => {
      const clock = new ManualClock();
      const first = await openBlobCache({ blobs: store.blobs, maxBytes: 3_800, now: clock.now });
      for (const n of [1, 2, 3]) await first.put(key(n), entry(clock, 1000));
      const second = await openBlobCache({ blobs: store.blobs, maxBytes: 3_800, now: clock.now });
      expect(await second.sizeBytes()).to.equal(3000);
      expect((await second.get(key(2)))?.image.byteLength).to.equal(1000);
      await second.put(key(4), entry(clock, 1000));
      expect(await second.sizeBytes()).to.be.at.most(3_800);
    });

    it('treats a blob that is not an entry as a miss and removes it', async () => {
      await store.blobs.put(`result-cache/${key(5)}`, Buffer.from('not an entry'), { metadata: { format: 'gif' } });
      const cache = await openBlobCache({ blobs: store.blobs, maxBytes: 1_000_000 });
      expect(await cache.get(key(5))).to.equal(undefined);
      expect(await store.blobs.head(`result-cache/${key(5)}`)).to.equal(undefined);
    });

    it('refuses keys that are not SHA-256 digests', async () => {
      const cache = await openBlobCache({ blobs: store.blobs, maxBytes: 1_000_000 });
      const error = await cache.get('../../etc/passwd').then(() => undefined, (err: unknown) => err);
      expect(String(error)).to.match(/SHA-256/);
    });
  });
});
