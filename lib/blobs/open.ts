/**
 * Which blob store to open (docs/configuration.md, "Blob storage"): BLOB_STORE=directory|gridfs|s3.
 * The default follows the store, as the blobs always have: GridFS beside MongoDB when MONGODB_URI
 * is set, files under DATA_DIR/blobs otherwise. Read once, by the API's config module.
 */
import path from 'node:path';
import { ConfigError, readBool, readEnum, readInt, readOptionalString, readString, type Env } from '../env.ts';
import { openOnFirstUse } from '../open-on-first-use.ts';
import type { StoreConfig } from '../store/open.ts';
import type { BlobStore } from './blob-store.ts';
import { openDirectoryBlobStore } from './directory-blob-store.ts';
import type { S3BlobStoreOptions } from './s3-blob-store.ts';

export const BLOB_STORES = ['directory', 'gridfs', 's3'] as const;

export type BlobStoreConfig =
  | { kind: 'directory'; dir: string }
  | { kind: 'gridfs'; mongodbUri: string; bucketName: string }
  | ({ kind: 's3' } & S3BlobStoreOptions);

export function loadBlobStoreConfig(env: Env, store: StoreConfig): BlobStoreConfig {
  const kind = readEnum(env, 'BLOB_STORE', BLOB_STORES, store.backend === 'mongo' ? 'gridfs' : 'directory');
  if (kind === 'directory') return { kind, dir: readString(env, 'BLOB_DIR', path.join(store.backend === 'sqlite' ? store.dataDir : readString(env, 'DATA_DIR', 'data'), 'blobs')) };
  if (kind === 'gridfs') {
    const mongodbUri = readOptionalString(env, 'MONGODB_URI');
    if (!mongodbUri) throw new ConfigError('BLOB_STORE=gridfs needs MONGODB_URI (the blobs go to GridFS on that MongoDB)');
    return { kind, mongodbUri, bucketName: readString(env, 'BLOB_GRIDFS_BUCKET', 'blobs') };
  }
  const required = (name: string) => {
    const value = readOptionalString(env, name);
    if (value === undefined) throw new ConfigError(`BLOB_STORE=s3 needs ${name}`);
    return value;
  };
  const region = readString(env, 'S3_REGION', 'us-east-1');
  const endpointText = readOptionalString(env, 'S3_ENDPOINT');
  const endpoint = URL.parse(endpointText ?? `https://s3.${region}.amazonaws.com`);
  if (!endpoint || (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') || endpoint.username || endpoint.password || endpoint.search) {
    throw new ConfigError('S3_ENDPOINT must be an http(s) URL with no credentials or query, such as https://s3.eu-west-1.amazonaws.com');
  }
  const sessionToken = readOptionalString(env, 'S3_SESSION_TOKEN');
  return {
    kind,
    endpoint,
    bucket: required('S3_BUCKET'),
    region,
    // Self-hosted servers (MinIO, versitygw, Ceph) want path style; AWS prefers virtual-hosted.
    pathStyle: readBool(env, 'S3_PATH_STYLE', endpointText !== undefined),
    credentials: { accessKeyId: required('S3_ACCESS_KEY_ID'), secretAccessKey: required('S3_SECRET_ACCESS_KEY'), ...(sessionToken ? { sessionToken } : {}) },
    timeoutMs: readInt(env, 'S3_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }),
  };
}

export async function openBlobStore(config: BlobStoreConfig): Promise<BlobStore> {
  if (config.kind === 'directory') return openDirectoryBlobStore({ dir: config.dir });
  // Loaded only when used, as the store does: the MongoDB driver is slow to import.
  if (config.kind === 'gridfs') return (await import('./gridfs-blob-store.ts')).openGridFsBlobStore({ uri: config.mongodbUri, bucketName: config.bucketName });
  const { kind: _kind, ...options } = config;
  return (await import('./s3-blob-store.ts')).openS3BlobStore(options);
}

/** Where the blobs are, for a log line: never a URI with a password, never a credential. */
export function describeBlobStore(config: BlobStoreConfig): string {
  if (config.kind === 'directory') return `files in ${config.dir}`;
  if (config.kind === 'gridfs') return `mongodb gridfs (bucket ${config.bucketName})`;
  return `s3 bucket ${config.bucket} at ${config.endpoint.origin}`;
}

/**
 * The store opened on first use, so that an install that never stores a blob needs no writable
 * directory and no reachable bucket; an open that fails is tried again by the next use.
 */
export function lazyBlobStore(config: BlobStoreConfig): BlobStore {
  const opened = openOnFirstUse(() => openBlobStore(config));
  const store = opened.get;
  return {
    put: async (key, body, options) => (await store()).put(key, body, options),
    get: async (key) => (await store()).get(key),
    getBuffer: async (key) => (await store()).getBuffer(key),
    head: async (key) => (await store()).head(key),
    delete: async (key) => (await store()).delete(key),
    async *list(prefix) {
      yield* (await store()).list(prefix);
    },
    describe: () => describeBlobStore(config),
    close: async () => (await opened.ifOpened())?.close(),
  };
}
