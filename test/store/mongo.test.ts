import { expect } from 'chai';
import { openMongoStore } from '../../lib/store/mongo.ts';
import type { Store } from '../../lib/store/store.ts';
import { describeOnMongo, freshMongoUri } from '../support/store-backends.ts';
import { storeConformance } from './conformance.ts';

describeOnMongo('store: MongoDB backend', (uri) => {
  storeConformance(
    () => openMongoStore({ uri: freshMongoUri(uri) }),
    async (store: Store) => {
      await (store as Store & { dropDatabase(): Promise<void> }).dropDatabase();
      await store.close();
    },
  );

  it('shares rate-limit counters between two connections to one database: together they allow exactly the limit', async () => {
    const database = freshMongoUri(uri);
    const [one, two] = await Promise.all([openMongoStore({ uri: database }), openMongoStore({ uri: database })]);
    try {
      const states = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? two : one).consumeRateLimit('key', 5, 60)));
      expect(states.filter((s) => s.allowed)).to.have.length(5);
    } finally {
      await one.dropDatabase();
      await Promise.all([one.close(), two.close()]);
    }
  });
});
