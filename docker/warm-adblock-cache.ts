/**
 * Image build step: parses Debian's filter lists once and writes the ad-blocking engine's cache
 * into the image, so that a container with a read-only root filesystem starts with a warm cache
 * (a cold parse costs seconds at every start). Usage: node docker/warm-adblock-cache.ts <dir>
 */
import { createLogger } from '../lib/logger.ts';
import { loadAdblockEngine } from '../services/renderer/src/capture/remove-ads/adblock-engine.ts';
import { loadRendererConfig } from '../services/renderer/src/config.ts';

const cacheDir = process.argv[2];
if (!cacheDir) {
  console.error('usage: node docker/warm-adblock-cache.ts <cache dir>');
  process.exit(2);
}
const config = loadRendererConfig(process.env);
const engine = await loadAdblockEngine({ listsDir: config.filterListsDir, cacheDir, log: createLogger({ name: 'warm-adblock-cache' }) });
if (!engine) {
  console.error(`warm-adblock-cache: no filter lists under ${config.filterListsDir}`);
  process.exit(1);
}
console.log(`warm-adblock-cache: engine cached in ${cacheDir}`);
