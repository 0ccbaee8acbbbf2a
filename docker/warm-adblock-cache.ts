/**
 * Image build step: parses Debian's filter lists once and writes the ad-blocking engine's cache
 * into the image, so that a container with a read-only root filesystem starts with a warm cache
 * (a cold parse costs seconds at every start). Usage: node docker/warm-adblock-cache.ts <dir>
 */
import { createLogger } from '../lib/logger.ts';
import { loadRemoveAdsEngine } from '../services/renderer/src/capture/remove-ads/page-cleaner.ts';
import { loadRendererConfig } from '../services/renderer/src/config.ts';

const cacheDir = process.argv[2];
if (!cacheDir) {
  console.error('usage: node docker/warm-adblock-cache.ts <cache dir>');
  process.exit(2);
}
const config = loadRendererConfig(process.env);
// The very engine the renderer loads (same lists, same cache key), or the cache is dead weight.
const engine = await loadRemoveAdsEngine({ filterListsDir: config.filterListsDir, adblockCacheDir: cacheDir }, createLogger({ name: 'warm-adblock-cache' }));
if (!engine) {
  console.error(`warm-adblock-cache: no filter lists under ${config.filterListsDir}`);
  process.exit(1);
}
console.log(`warm-adblock-cache: engine cached in ${cacheDir}`);
