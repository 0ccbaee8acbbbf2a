import os from 'node:os';
import { readBool, readInt, readList, readOptionalString, readString, type Env } from '../../../lib/env.ts';
import { parseNetworkAllowlist, type NetworkAllowlist } from '../../../lib/network-allowlist.ts';
import { loadHttpServiceConfig, type HttpServiceConfig } from '../../../lib/service-process.ts';

export interface RendererConfig {
  chromiumPath: string;
  /** Chromium's sandbox needs a non-root user; as root it must be off. */
  chromiumSandbox: boolean;
  /** Captures rendered at once; each holds one browser context. */
  concurrency: number;
  navigationTimeoutMs: number;
  /** Backstop for a whole capture (navigation, wait, screenshot), so that a hung page cannot hold a slot. */
  captureTimeoutMs: number;
  /** Longest the smart wait waits for a page to become ready before capturing anyway. */
  smartWaitMaxMs: number;
  /** Cap on a full-page PNG's height, in image pixels. */
  fullPageMaxHeight: number;
  networkAllowlist: NetworkAllowlist;
}

const MIB = 1024 * 1024;
/** Memory a busy Chromium context needs at the largest profile, measured with retina full-page captures. */
const MEMORY_PER_CAPTURE = 512 * MIB;

export function defaultConcurrency(): number {
  const byMemory = Math.floor(os.totalmem() / MEMORY_PER_CAPTURE);
  return Math.max(1, Math.min(os.availableParallelism(), byMemory));
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
    smartWaitMaxMs: readInt(env, 'SMART_WAIT_MAX_MS', 8000, { min: 500, max: 60_000 }),
    fullPageMaxHeight: readInt(env, 'FULL_PAGE_MAX_HEIGHT', 16_384, { min: 100, max: 32_768 }),
    networkAllowlist: parseNetworkAllowlist(readList(env, 'PRIVATE_NETWORK_ALLOWLIST')),
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
