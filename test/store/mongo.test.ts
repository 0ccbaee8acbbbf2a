import { expect } from 'chai';
import { openMongoStore } from '../../lib/store/mongo.ts';
import type { Store } from '../../lib/store/store.ts';
import { describeOnMongo, freshMongoUri, isFerretDB } from '../support/store-backends.ts';
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

  it('loses no usage count when two connections record captures of one account at the same time', async function () {
    if (await isFerretDB(uri)) {
      // FerretDB v1 applies an $inc as a read, then a write of the whole document: two processes
      // incrementing one counter lose counts. One process serializes its own (the conformance suite
      // checks that); across processes it holds on MongoDB only (docs/hosted.md, "MongoDB servers").
      console.log('      (skipped on FerretDB: an $inc from two connections at once is not atomic there; MongoDB only)');
      this.skip();
    }
    const database = freshMongoUri(uri);
    const [one, two] = await Promise.all([openMongoStore({ uri: database }), openMongoStore({ uri: database })]);
    try {
      const event = { accountId: 'acct_shared', siteId: 'site_x', keyId: 'key_x', outcome: 'capture' as const, bytes: 1 };
      await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? two : one).recordUsage(event)));
      expect((await one.listUsage('acct_shared')).find((row) => row.scope === 'site')?.captures).to.equal(40);
    } finally {
      await one.dropDatabase();
      await Promise.all([one.close(), two.close()]);
    }
  });
});
