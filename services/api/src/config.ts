import { readEnum, readInt, readOptionalString, readString, type Env } from '../../../lib/env.ts';
import { loadStoreConfig, type StoreConfig } from '../../../lib/store/open.ts';
import { loadRendererConfig, type RendererConfig } from '../../renderer/src/config.ts';

export const MODES = ['self-hosted', 'hosted'] as const;
export type Mode = (typeof MODES)[number];

export interface ApiConfig {
  mode: Mode;
  host: string;
  port: number;
  /** Self-hosted only: when set, every capture must carry this key. */
  apiKey: string | undefined;
  bodyLimitBytes: number;
  maxHeaderBytes: number;
  /** How long SIGTERM waits for captures in flight before closing Chromium regardless. */
  shutdownTimeoutMs: number;
  logLevel: string;
  renderer: RendererConfig;
  /** Hosted only: where accounts, sites and keys live (MONGODB_URI, else DATA_DIR). */
  store: StoreConfig;
  /** Hosted only: captures per minute per key, unless the account sets its own limit. */
  rateLimitPerMinute: number;
}

export function loadApiConfig(env: Env): ApiConfig {
  return {
    mode: readEnum(env, 'MODE', MODES, 'self-hosted'),
    host: readString(env, 'HOST', '0.0.0.0'),
    port: readInt(env, 'PORT', 3000, { min: 0, max: 65_535 }),
    apiKey: readOptionalString(env, 'API_KEY'),
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 64 * 1024, { min: 1024, max: 10 * 1024 * 1024 }),
    maxHeaderBytes: readInt(env, 'MAX_HEADER_BYTES', 16 * 1024, { min: 1024, max: 64 * 1024 }),
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 60_000, { min: 0 }),
    logLevel: readString(env, 'LOG_LEVEL', 'info'),
    renderer: loadRendererConfig(env),
    store: loadStoreConfig(env),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 60, { min: 1, max: 1_000_000 }),
  };
}
