import os from 'node:os';
import path from 'node:path';
import { readBool, readInt, readList, readOptionalString, readString, type Env } from '../../../lib/env.ts';
import { parseNetworkAllowlist, type NetworkAllowlist } from '../../../lib/network-allowlist.ts';

export interface RendererConfig {
  chromiumPath: string;
  /** Chromium's sandbox needs a non-root user; as root it must be off. */
  chromiumSandbox: boolean;
  /** Captures rendered at once; each holds one browser context. */
  concurrency: number;
  navigationTimeoutMs: number;
  /** Backstop for a whole capture (navigation, wait, screenshot), so that a hung page cannot hold a slot. */
  captureTimeoutMs: number;
  /** Cap on a full-page PNG's height, in image pixels. */
  fullPageMaxHeight: number;
  networkAllowlist: NetworkAllowlist;
  /** Where Debian's uBlock Origin package puts EasyList, EasyPrivacy and uBlock's own lists. */
  filterListsDir: string;
  /** Where the parsed ad-blocking engine is cached between starts. */
  adblockCacheDir: string;
}

const MIB = 1024 * 1024;
/** Memory a busy Chromium context needs at the largest profile, measured with retina full-page captures. */
const MEMORY_PER_CAPTURE = 512 * MIB;

export function defaultConcurrency(): number {
  const byMemory = Math.floor(os.totalmem() / MEMORY_PER_CAPTURE);
  return Math.max(1, Math.min(os.availableParallelism(), byMemory));
}

export const DEBIAN_UBLOCK_ASSETS = '/usr/share/chromium/extensions/ublock-origin/assets';

/** The XDG cache directory, as a desktop tool would use it; a container mounts a volume or sets ADBLOCK_CACHE_DIR. */
function defaultCacheDir(env: Env): string {
  const base = readOptionalString(env, 'XDG_CACHE_HOME') ?? path.join(readString(env, 'HOME', os.homedir()), '.cache');
  return path.join(base, 'viewfinder');
}

export function loadRendererConfig(env: Env): RendererConfig {
  const navigationTimeoutMs = readInt(env, 'NAVIGATION_TIMEOUT_MS', 30_000, { min: 1000, max: 300_000 });
  const runningAsRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return {
    chromiumPath: readString(env, 'CHROMIUM_PATH', '/usr/bin/chromium'),
    chromiumSandbox: readBool(env, 'CHROMIUM_SANDBOX', !runningAsRoot),
    concurrency: readInt(env, 'RENDER_CONCURRENCY', defaultConcurrency(), { min: 1, max: 64 }),
    navigationTimeoutMs,
    // Navigation, the longest allowed wait (8 s), and a margin for the screenshot itself.
    captureTimeoutMs: readInt(env, 'CAPTURE_TIMEOUT_MS', navigationTimeoutMs + 8000 + 15_000, { min: 2000 }),
    fullPageMaxHeight: readInt(env, 'FULL_PAGE_MAX_HEIGHT', 16_384, { min: 100, max: 32_768 }),
    networkAllowlist: parseNetworkAllowlist(readList(env, 'PRIVATE_NETWORK_ALLOWLIST')),
    filterListsDir: readString(env, 'FILTER_LISTS_DIR', DEBIAN_UBLOCK_ASSETS),
    adblockCacheDir: readString(env, 'ADBLOCK_CACHE_DIR', defaultCacheDir(env)),
  };
}
