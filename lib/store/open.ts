import { readInt, readOptionalString, readString, type Env } from '../env.ts';
import { loadSecretKeys, type SecretKeys } from './secret-sealing.ts';
import { openSqliteStore } from './sqlite.ts';
import type { Store } from './store.ts';

/**
 * Which store to open: MongoDB when MONGODB_URI is set, otherwise the embedded one under DATA_DIR.
 * The API, the admin CLI and the operator all read it here, so they always agree on where the data is.
 */
export type StoreConfig = ({ backend: 'mongo'; mongodbUri: string } | { backend: 'sqlite'; dataDir: string; busyTimeoutMs: number }) & {
  /** SIGNING_SECRETS_KEY, SIGNING_SECRETS_PREVIOUS_KEYS: what seals the signing secrets at rest (secret-sealing.ts). */
  secretKeys?: SecretKeys;
};

export function loadStoreConfig(env: Env): StoreConfig {
  const mongodbUri = readOptionalString(env, 'MONGODB_URI');
  const secretKeys = loadSecretKeys(env);
  if (mongodbUri !== undefined) return { backend: 'mongo', mongodbUri, secretKeys };
  return {
    secretKeys,
    backend: 'sqlite',
    dataDir: readString(env, 'DATA_DIR', 'data'),
    busyTimeoutMs: readInt(env, 'STORE_BUSY_TIMEOUT_MS', 5000, { min: 0, max: 600_000 }),
  };
}

export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.backend === 'sqlite') return openSqliteStore({ dataDir: config.dataDir, busyTimeoutMs: config.busyTimeoutMs, ...(config.secretKeys ? { secretKeys: config.secretKeys } : {}) });
  // Loaded only when used: the MongoDB driver takes longer to import than the whole CLI takes to run.
  const { openMongoStore } = await import('./mongo.ts');
  return openMongoStore({ uri: config.mongodbUri, ...(config.secretKeys ? { secretKeys: config.secretKeys } : {}) });
}

/** Where the data is, for a log line: never the URI itself, which may hold a password. */
export function describeStore(config: StoreConfig): string {
  return config.backend === 'mongo' ? 'mongodb' : `sqlite in ${config.dataDir}`;
}
