import type { ResultCacheConfig } from '../config.ts';
import { openDiskCache } from './disk-cache.ts';
import type { ResultCache } from './result-cache.ts';

/** GridFS when MONGODB_URI is set (shared by every replica), else files under DATA_DIR. */
export async function openResultCache(config: ResultCacheConfig): Promise<ResultCache> {
  if (config.backend === 'disk') return openDiskCache({ dir: config.dir, maxBytes: config.maxBytes });
  // Loaded only when used, as the store does: the MongoDB driver is slow to import.
  const { openGridFsCache } = await import('./gridfs-cache.ts');
  return openGridFsCache({ uri: config.mongodbUri, maxBytes: config.maxBytes });
}

export function describeResultCache(config: ResultCacheConfig): string {
  return config.backend === 'disk' ? `files in ${config.dir}` : 'mongodb gridfs';
}
