import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { openMongoStore } from '../../lib/store/mongo.ts';
import type { Store } from '../../lib/store/store.ts';
import { storeConformance } from './conformance.ts';
import { sealingConformance } from './sealing-conformance.ts';

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

  sealingConformance(() => {
    const dbName = `viewfinder_test_${randomBytes(6).toString('hex')}`;
    const raw = async () => {
      const connection = await mongoose.createConnection(uri, { dbName }).asPromise();
      return { keys: connection.collection<{ _id: string; signingSecret?: string | null }>('apiKeys'), close: () => connection.close() };
    };
    return {
      open: (secretKeys) => openMongoStore({ uri, dbName, secretKeys }),
      async rawSigningSecret(keyId) {
        const { keys, close } = await raw();
        try {
          return (await keys.findOne({ _id: keyId }))?.signingSecret ?? null;
        } finally {
          await close();
        }
      },
      async writePlainSigningSecret(keyId, secret) {
        const { keys, close } = await raw();
        try {
          await keys.updateOne({ _id: keyId }, { $set: { signingSecret: secret } });
        } finally {
          await close();
        }
      },
      async cleanup() {
        const connection = await mongoose.createConnection(uri, { dbName }).asPromise();
        await connection.dropDatabase();
        await connection.close();
      },
    };
  });

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
