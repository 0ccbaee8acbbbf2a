import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../../lib/store/sqlite.ts';
import type { Store } from '../../lib/store/store.ts';
import { describeWithServer } from './skip.ts';

/**
 * The store backends a test runs on: the embedded SQLite store, and MongoDB on the server that
 * VIEWFINDER_TEST_MONGODB_URI names (make test starts FerretDB through
 * test/cluster/with-test-servers.sh and sets it). Not MONGODB_URI: every service process a test
 * starts would inherit that and leave the embedded store; a test hands the URI to a process itself.
 * Read here rather than through a config module: the test decides whether a server is there to use.
 */
export const MONGODB_URI = process.env.VIEWFINDER_TEST_MONGODB_URI || undefined;

/** Why a MongoDB leg skips, and how to run it. */
export const NO_MONGODB =
  'VIEWFINDER_TEST_MONGODB_URI is not set, so there is no MongoDB server to test against. `make test` starts one (FerretDB, built from Go modules); ' +
  'for one file: VIEWFINDER_CLUSTER=none test/cluster/with-test-servers.sh node_modules/.bin/mocha FILE';

/** A fresh database on the MongoDB server: the server's URI with a database name of its own. */
export function freshMongoUri(uri: string, prefix = 'viewfinder_test'): string {
  const url = new URL(uri);
  url.pathname = `/${prefix}_${randomBytes(6).toString('hex')}`;
  return url.toString();
}

/**
 * `describe(title)` whose body runs only with a MongoDB server; without one it holds a single test
 * that skips, saying why and how to get one.
 */
export function describeOnMongo(title: string, body: (this: Mocha.Suite, uri: string) => void): void {
  describeWithServer(title, MONGODB_URI, { test: 'is skipped: no MongoDB server (MONGODB_URI)', why: NO_MONGODB }, body);
}

/** Whether the server is FerretDB, which answers buildInfo with a version of its own beside MongoDB's. */
export async function isFerretDB(uri: string): Promise<boolean> {
  const { default: mongoose } = await import('mongoose');
  const client = await mongoose.mongo.MongoClient.connect(uri, { serverSelectionTimeoutMS: 10_000 });
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    return 'ferretdbVersion' in info;
  } finally {
    await client.close();
  }
}

/** One empty store for one test: the environment an API process needs to open it, and a handle on it. */
export interface TestStore {
  env: Record<string, string>;
  store: Store;
  dispose(): Promise<void>;
}

export interface StoreBackend {
  /** For test titles: "embedded SQLite" or "MongoDB". */
  name: string;
  create(): Promise<TestStore>;
}

export const sqlite: StoreBackend = {
  name: 'embedded SQLite',
  async create() {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-store-'));
    const store = openSqliteStore({ dataDir });
    return {
      env: { DATA_DIR: dataDir, MONGODB_URI: '' },
      store,
      async dispose() {
        await store.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
};

export function mongo(uri: string): StoreBackend {
  return {
    name: 'MongoDB',
    async create() {
      const { openMongoStore } = await import('../../lib/store/mongo.ts');
      const database = freshMongoUri(uri);
      const store = await openMongoStore({ uri: database });
      return {
        env: { MONGODB_URI: database },
        store,
        async dispose() {
          await store.dropDatabase();
          await store.close();
        },
      };
    },
  };
}

/**
 * Runs `body` once per backend, each in a describe of its own named after it ("… on MongoDB"); the
 * MongoDB one skips, saying why, when there is no server.
 */
export function forEachStoreBackend(title: string, body: (this: Mocha.Suite, backend: StoreBackend) => void): void {
  describe(`${title} on ${sqlite.name}`, function () {
    body.call(this, sqlite);
  });
  describeOnMongo(`${title} on MongoDB`, function (uri) {
    body.call(this, mongo(uri));
  });
}
