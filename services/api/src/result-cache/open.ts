import { describeBlobStore, openBlobStore } from '../../../../lib/blobs/open.ts';
import { openOnFirstUse } from '../../../../lib/open-on-first-use.ts';
import type { ResultCacheConfig } from '../config.ts';
import { openBlobCache } from './blob-cache.ts';
import { openDiskCache } from './disk-cache.ts';
import type { ResultCache } from './result-cache.ts';

/** The S3 bucket with BLOB_STORE=s3; else GridFS when MONGODB_URI is set (shared by every replica), else files under DATA_DIR. */
export async function openResultCache(config: ResultCacheConfig): Promise<ResultCache> {
  if (config.backend === 'disk') return openDiskCache({ dir: config.dir, maxBytes: config.maxBytes });
  if (config.backend === 'blobs') return openBlobCache({ blobs: await openBlobStore(config.blobs), maxBytes: config.maxBytes });
  // Loaded only when used, as the store does: the MongoDB driver is slow to import.
  const { openGridFsCache } = await import('./gridfs-cache.ts');
  return openGridFsCache({ uri: config.mongodbUri, maxBytes: config.maxBytes });
}

export function describeResultCache(config: ResultCacheConfig): string {
  if (config.backend === 'blobs') return `${describeBlobStore(config.blobs)}, under result-cache/`;
  return config.backend === 'disk' ? `files in ${config.dir}` : 'mongodb gridfs';
}

/**
 * The cache the API runs with: opened on the first request that asks for it (cacheTtl above 0),
 * so that an install whose clients never do needs no writable DATA_DIR and no GridFS bucket. An
 * open that fails is tried again by the next request; meanwhile those requests render (the caller
 * logs the failure and bypasses the cache).
 */
export function lazyResultCache(config: ResultCacheConfig): ResultCache {
  const opened = openOnFirstUse(() => openResultCache(config));
  const cache = opened.get;
  return {
    get: async (key) => (await cache()).get(key),
    put: async (key, entry) => (await cache()).put(key, entry),
    sizeBytes: async () => (await opened.ifOpened())?.sizeBytes() ?? 0,
    close: async () => (await opened.ifOpened())?.close(),
  };
}
