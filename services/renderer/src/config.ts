import os from 'node:os';
import path from 'node:path';
import { readBool, readInt, readList, readOptionalString, readString, type Env } from '../../../lib/env.ts';
import { parseNetworkAllowlist, type NetworkAllowlist } from '../../../lib/network-allowlist.ts';
import { loadHttpServiceConfig, type HttpServiceConfig } from '../../../lib/service-process.ts';

export interface RendererConfig {
  chromiumPath: string;
  /** Chromium's sandbox needs a non-root user; as root it must be off. */
  chromiumSandbox: boolean;
  /** Captures rendered at once; each holds one browser context. */
  concurrency: number;
  /** Captures admitted to wait for a slot; beyond them a request gets 429. */
  queueLimit: number;
  navigationTimeoutMs: number;
  /** Deadline for a whole capture, counted from its arrival: time queued, navigation, wait, screenshot. */
  captureTimeoutMs: number;
  /** Longest the smart wait waits for a page to become ready before capturing anyway. */
  smartWaitMaxMs: number;
  /** A browser retires after this many captures (0: never). */
  recycleAfterCaptures: number;
  /** A browser retires when its process tree holds more resident memory than this (0: never). */
  browserMemoryLimitBytes: number;
  /** Root of every browser's own profile directory (and of its TMPDIR, when short enough). */
  tempRoot: string;
  /** Root of every browser's own TMPDIR: `tempRoot`, or a shorter one when that is too long (chromiumRuntimeRoot). */
  runtimeRoot: string;
  /** Cap on a full-page PNG's height, in image pixels. */
  fullPageMaxHeight: number;
  /** PDF_MAX_PAGES: a PDF with more pages (after pageRanges) is refused with a 400. */
  pdfMaxPages: number;
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

/**
 * Chromium binds its SingletonSocket at `$TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket`
 * (45 bytes past TMPDIR), and a Unix socket's path holds at most 107 bytes. A browser's TMPDIR is
 * `<runtime root>/<pid>-<12 hex digits>/tmp` (at most 25 bytes more), which leaves the root 37.
 */
export const MAX_RUNTIME_ROOT_BYTES = 107 - 45 - 25;

/**
 * Where browsers get their TMPDIR: the temp root when it is short enough; else a folder in
 * $XDG_RUNTIME_DIR (per user, private); else one in /tmp. A long TMPDIR is common: systemd's
 * PrivateTmp, CI runners and per-job folders all make one, and Chromium would not start under it.
 */
export function chromiumRuntimeRoot(tempRoot: string, env: Env): string {
  const uid = process.getuid?.() ?? 0;
  const xdg = readOptionalString(env, 'XDG_RUNTIME_DIR');
  const candidates = [tempRoot, ...(xdg ? [path.join(xdg, 'viewfinder')] : []), `/tmp/viewfinder-${uid}`];
  return candidates.find((root) => Buffer.byteLength(root) <= MAX_RUNTIME_ROOT_BYTES) ?? `/tmp/viewfinder-${uid}`;
}

export function loadRendererConfig(env: Env): RendererConfig {
  const navigationTimeoutMs = readInt(env, 'NAVIGATION_TIMEOUT_MS', 30_000, { min: 1000, max: 300_000 });
  const concurrency = readInt(env, 'RENDER_CONCURRENCY', defaultConcurrency(), { min: 1, max: 64 });
  // Room for the browser process itself on top of one busy context per slot.
  const defaultMemoryLimitMb = (concurrency * MEMORY_PER_CAPTURE + 512 * MIB) / MIB;
  const runningAsRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const tempRoot = readString(env, 'RENDERER_TEMP_DIR', path.join(os.tmpdir(), 'viewfinder-renderer'));
  return {
    chromiumPath: readString(env, 'CHROMIUM_PATH', '/usr/bin/chromium'),
    chromiumSandbox: readBool(env, 'CHROMIUM_SANDBOX', !runningAsRoot),
    concurrency,
    queueLimit: readInt(env, 'RENDER_QUEUE_LIMIT', concurrency * 4, { min: 0, max: 10_000 }),
    navigationTimeoutMs,
    // Navigation, the longest allowed wait (8 s), and a margin for the screenshot itself.
    captureTimeoutMs: readInt(env, 'CAPTURE_TIMEOUT_MS', navigationTimeoutMs + 8000 + 15_000, { min: 2000 }),
    smartWaitMaxMs: readInt(env, 'SMART_WAIT_MAX_MS', 8000, { min: 500, max: 60_000 }),
    recycleAfterCaptures: readInt(env, 'BROWSER_RECYCLE_AFTER', 500, { min: 0 }),
    browserMemoryLimitBytes: readInt(env, 'BROWSER_MEMORY_LIMIT_MB', defaultMemoryLimitMb, { min: 0 }) * MIB,
    tempRoot,
    runtimeRoot: chromiumRuntimeRoot(tempRoot, env),
    fullPageMaxHeight: readInt(env, 'FULL_PAGE_MAX_HEIGHT', 16_384, { min: 100, max: 32_768 }),
    pdfMaxPages: readInt(env, 'PDF_MAX_PAGES', 100, { min: 1, max: 10_000 }),
    networkAllowlist: parseNetworkAllowlist(readList(env, 'PRIVATE_NETWORK_ALLOWLIST')),
    filterListsDir: readString(env, 'FILTER_LISTS_DIR', DEBIAN_UBLOCK_ASSETS),
    adblockCacheDir: readString(env, 'ADBLOCK_CACHE_DIR', defaultCacheDir(env)),
  };
}

/** The renderer as its own process (main.ts): where it listens, and what it asks of its callers. */
export interface RendererServiceConfig extends HttpServiceConfig {
  /** When set, POST /v1/captures needs `Authorization: Bearer <token>`; probes and /metrics stay open. */
  token: string | undefined;
  renderer: RendererConfig;
}

export function loadRendererServiceConfig(env: Env): RendererServiceConfig {
  return {
    ...loadHttpServiceConfig(env, 'RENDERER_PORT', 3001),
    token: readOptionalString(env, 'RENDERER_TOKEN'),
    renderer: loadRendererConfig(env),
  };
}
