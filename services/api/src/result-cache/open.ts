import type { ResultCacheConfig } from '../config.ts';
import { openDiskCache } from './disk-cache.ts';
import type { ResultCache } from './result-cache.ts';

/** Files under DATA_DIR. */
export async function openResultCache(config: ResultCacheConfig): Promise<ResultCache> {
  return openDiskCache({ dir: config.dir, maxBytes: config.maxBytes });
}

export function describeResultCache(config: ResultCacheConfig): string {
  return `files in ${config.dir}`;
}
