/**
 * The result cache's port: finished captures stored under a key that is the normalized request,
 * so that the same request within its cacheTtl answers without rendering. Two backends: files
 * under DATA_DIR with an LRU size bound (disk-cache.ts) and MongoDB GridFS, shared by every API
 * replica (gridfs-cache.ts). One conformance suite runs against both.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { DEFAULT_IMAGE_FORMAT, DEFAULT_IMAGE_QUALITY, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';
import { resolvePdfOptions } from '../../../renderer/src/capture/pdf.ts';
import type { CaptureRequest, CaptureResult } from '../../../renderer/src/renderer.ts';
import { hasCredentials } from '../../../renderer/src/capture/visit-options.ts';

export interface CacheEntry {
  /** The image or PDF bytes. */
  image: Buffer;
  format: CaptureFormat;
  width: number;
  height: number;
  truncated: boolean;
  waitMs: number;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds: createdAt plus the cacheTtl of the request that stored it. */
  expiresAt: number;
}

export interface ResultCache {
  /** The entry under `key` unless it is missing or expired; a hit counts as a use for LRU. */
  get(key: string): Promise<CacheEntry | undefined>;
  /** Stores (or replaces) the entry, then evicts least recently used entries beyond the size bound. */
  put(key: string, entry: CacheEntry): Promise<void>;
  /** Bytes of image data held now. */
  sizeBytes(): Promise<number>;
  close(): Promise<void>;
}

/** Whose request it is: a site never shares entries with another site, nor with the self-hosted mode. */
export type CacheScope = { mode: 'self-hosted' } | { mode: 'hosted'; siteId: string };

/**
 * The key: a SHA-256 of the request with every default applied, so that spelling a default out
 * or leaving it implicit is one entry, and of its scope. cacheTtl is not part of it: it only says
 * how old an entry the client accepts.
 */
export function cacheKey(request: CaptureRequest, scope: CacheScope): string {
  const format = request.format ?? DEFAULT_IMAGE_FORMAT;
  const normalized = {
    version: 1,
    scope: scope.mode === 'hosted' ? `site:${scope.siteId}` : 'self-hosted',
    url: URL.parse(request.url)?.href ?? request.url,
    quality: request.quality,
    wait: request.wait ?? null,
    fullPage: request.fullPage,
    removeAds: request.removeAds,
    format,
    imageQuality: format === 'png' || format === 'pdf' ? null : (request.imageQuality ?? DEFAULT_IMAGE_QUALITY),
    // Only a PDF's key has the field, so that every image's key is what it was before PDFs: the
    // options with their defaults, paper and margins in CSS px ("A4" and 210mm x 297mm are one entry).
    ...(format === 'pdf' ? { pdf: resolvePdfOptions(request.pdf) } : {}),
    selector: request.selector ?? null,
    waitForSelector: request.waitForSelector ?? null,
    // Hiding is the same whatever the order, and hiding twice is hiding once.
    hideSelectors: [...new Set(request.hideSelectors ?? [])].sort(),
    darkMode: request.darkMode ?? false,
    reducedMotion: request.reducedMotion ?? false,
    // A restricted key's capture is held to its domains as they are now: a page that redirected
    // within the old list must not be served once the list has changed.
    allowedDomains: request.allowedDomains ? [...new Set(request.allowedDomains)].sort() : null,
    // Only when set, so that every key made before the option existed stays the same.
    ...(request.freezeMotion ? { freezeMotion: true } : {}),
    ...visitKey(request),
  };
  return createHash('sha256').update(JSON.stringify(normalized)).digest('hex');
}

/**
 * Drawn once per process. Credentials enter the key only as an HMAC under it, so that a stored key
 * (a file name, a GridFS name) cannot be used to test a guessed password offline; the price is that
 * captures with credentials share entries only within one API process.
 */
const CREDENTIALS_KEY = randomBytes(32);

function credentialsDigest(request: CaptureRequest): string {
  const headers = Object.entries(request.headers ?? {})
    .map(([name, value]) => [name.toLowerCase(), value])
    .sort();
  const cookies = (request.cookies ?? []).map(({ name, value }) => [name, value]).sort();
  return createHmac('sha256', CREDENTIALS_KEY)
    .update(JSON.stringify({ headers, cookies, authorization: request.authorization ?? null }))
    .digest('hex');
}

/** The visit options (visit-options.ts), each only when set, lists as sets; credentials only as a keyed hash. */
function visitKey(request: CaptureRequest): Record<string, unknown> {
  const set = (list: readonly string[] | undefined) => (list ? [...new Set(list)].sort() : undefined);
  const fields: Record<string, unknown> = {
    html: request.html,
    userAgent: request.userAgent,
    injectCss: request.injectCss,
    injectJs: request.injectJs,
    click: request.click,
    blockResources: set(request.blockResources),
    blockUrls: set(request.blockUrls),
    timezone: request.timezone,
    locale: request.locale,
    geolocation: request.geolocation ? { accuracy: 0, ...request.geolocation } : undefined,
    credentials: hasCredentials(request) ? credentialsDigest(request) : undefined,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

export function entryOf(result: CaptureResult, now: number, ttlSeconds: number): CacheEntry {
  const { image, format, width, height, truncated, waitMs } = result;
  return { image, format, width, height, truncated, waitMs, createdAt: now, expiresAt: now + ttlSeconds * 1000 };
}

export function resultOf(entry: CacheEntry): CaptureResult {
  const { image, format, width, height, truncated, waitMs } = entry;
  return { image, format, width, height, fileSize: image.byteLength, truncated, waitMs };
}
