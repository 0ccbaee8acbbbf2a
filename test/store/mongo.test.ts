import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { openMongoStore } from '../../lib/store/mongo.ts';
import type { Store } from '../../lib/store/store.ts';
import { storeConformance } from './conformance.ts';

// Read here rather than through a config module: the test decides whether a server is there to use.
const MONGODB_URI = process.env.MONGODB_URI;

describe('store: MongoDB backend', function () {
  if (!MONGODB_URI) {
    it('is skipped: set MONGODB_URI to run the conformance suite against MongoDB', function () {
      console.log('      (skipped: MONGODB_URI is not set, so there is no MongoDB server to test against)');
      this.skip();
    });
    return;
  }
  const uri = MONGODB_URI;
  storeConformance(
    () => openMongoStore({ uri, dbName: `viewfinder_test_${randomBytes(6).toString('hex')}` }),
    async (store: Store) => {
      await (store as Store & { dropDatabase(): Promise<void> }).dropDatabase();
      await store.close();
    },
  );

  it('shares rate-limit counters between two connections to one database: together they allow exactly the limit', async () => {
    const dbName = `viewfinder_test_${randomBytes(6).toString('hex')}`;
    const [one, two] = await Promise.all([openMongoStore({ uri, dbName }), openMongoStore({ uri, dbName })]);
    try {
      const states = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? two : one).consumeRateLimit('key', 5, 60)));
      expect(states.filter((s) => s.allowed)).to.have.length(5);
    } finally {
      await one.dropDatabase();
      await Promise.all([one.close(), two.close()]);
    }
  });
});
