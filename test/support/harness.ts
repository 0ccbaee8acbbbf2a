import type Koa from 'koa';
import { PNG } from 'pngjs';
import { createLogger, type Logger } from '../../lib/logger.ts';
import { createApp } from '../../services/api/src/app.ts';
import { loadApiConfig, type ApiConfig } from '../../services/api/src/config.ts';
import { createChromiumRenderer } from '../../services/renderer/src/pool.ts';
import type { Renderer } from '../../services/renderer/src/renderer.ts';

/** Settings every test starts from: loopback allowed, a small full-page cap so that PNGs stay quick to decode. */
export const TEST_ENV = {
  PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8',
  RENDER_CONCURRENCY: '2',
  FULL_PAGE_MAX_HEIGHT: '5000',
  LOG_LEVEL: 'silent',
} as const;

export function testConfig(env: Record<string, string> = {}): ApiConfig {
  return loadApiConfig({ CHROMIUM_PATH: process.env.CHROMIUM_PATH, ...TEST_ENV, ...env });
}

export const silentLogger: Logger = createLogger({ level: 'silent' });

const renderers: Renderer[] = [];

/** Starts a real Chromium pool; every pool started here is closed after the whole suite. */
export async function startRenderer(config: ApiConfig = testConfig()): Promise<Renderer> {
  const renderer = await createChromiumRenderer(config.renderer, silentLogger);
  renderers.push(renderer);
  return renderer;
}

let shared: Promise<Renderer> | undefined;
/** One pool with the default test settings, shared by the test files that need nothing special. */
export function sharedRenderer(): Promise<Renderer> {
  shared ??= startRenderer();
  return shared;
}

export function appWith(renderer: Renderer, env: Record<string, string> = {}): Koa {
  return createApp({ config: testConfig(env), renderer, logger: silentLogger });
}

export async function closeAllRenderers(): Promise<void> {
  await Promise.all(renderers.splice(0).map((renderer) => renderer.close()));
  shared = undefined;
}

export interface DecodedImage {
  png: PNG;
  bytes: Buffer;
  /** [r, g, b] at image pixel (x, y). */
  rgb(x: number, y: number): [number, number, number];
}

/** Decodes a `data:image/png;base64,...` URI, failing loudly if it is anything else. */
export function decodeDataUri(image: unknown): DecodedImage {
  if (typeof image !== 'string') throw new Error(`image is not a string: ${typeof image}`);
  const match = /^data:image\/png;base64,([A-Za-z0-9+/]+={0,2})$/.exec(image);
  if (!match) throw new Error(`image is not a PNG data URI: ${image.slice(0, 40)}...`);
  const bytes = Buffer.from(match[1] as string, 'base64');
  return decodedImage(PNG.sync.read(bytes), bytes);
}

/** A decoded image with its pixels readable by coordinate; `bytes` are the image as it was encoded. */
export function decodedImage(png: PNG, bytes: Buffer): DecodedImage {
  return {
    png,
    bytes,
    rgb(x, y) {
      const offset = (png.width * y + x) * 4;
      return [png.data[offset] as number, png.data[offset + 1] as number, png.data[offset + 2] as number];
    },
  };
}
