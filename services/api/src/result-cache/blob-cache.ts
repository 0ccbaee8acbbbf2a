/**
 * The result cache in the service's blob store (lib/blobs), for stores that have no cache of their
 * own here: with BLOB_STORE=s3 the entries are objects under result-cache/<key>, shared by every
 * replica. The image is the blob; the entry's other fields are its metadata.
 *
 * The size bound is kept as on disk: an index of entries in order of use, in this process, evicting
 * the least recently used past RESULT_CACHE_MAX_MB. It is built from the store's listing at open
 * (by time of writing) and merged with a fresh listing now and then, so that what other replicas
 * wrote counts too; uses are not shared (an object store cannot touch an object's time without
 * rewriting it), so each replica evicts by the uses it saw, and by age of writing for the rest.
 */
import type { BlobStore } from '../../../../lib/blobs/blob-store.ts';
import { CAPTURE_FORMATS, MIME_TYPES, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';
import { recordEviction } from './metrics.ts';
import type { CacheEntry, ResultCache } from './result-cache.ts';

const PREFIX = 'result-cache/';
const KEY = /^[0-9a-f]{64}$/;
/** How often a put merges the store's listing into the index: often enough to bound several replicas together. */
const REFRESH_INTERVAL_MS = 60_000;

export interface BlobCacheOptions {
  blobs: BlobStore;
  maxBytes: number;
  now?: () => number;
}

interface Indexed {
  size: number;
  /** Epoch ms: this process's last use, else the blob's time of writing. */
  usedAt: number;
}

export async function openBlobCache(options: BlobCacheOptions): Promise<ResultCache> {
  const { blobs, maxBytes } = options;
  const now = options.now ?? Date.now;
  const index = new Map<string, Indexed>();
  const seenHere = new Set<string>();
  const blobKeyOf = (key: string) => {
    if (!KEY.test(key)) throw new Error('result cache keys are SHA-256 hex digests');
    return PREFIX + key;
  };
  const total = () => [...index.values()].reduce((sum, { size }) => sum + size, 0);

  /** The listing's entries replace the index's, keeping this process's own uses. */
  const refresh = async () => {
    const listed = new Map<string, Indexed>();
    for await (const { key, size, lastModified } of blobs.list(PREFIX)) {
      const name = key.slice(PREFIX.length);
      if (!KEY.test(name)) continue;
      listed.set(name, { size, usedAt: seenHere.has(name) ? (index.get(name)?.usedAt ?? lastModified.getTime()) : lastModified.getTime() });
    }
    index.clear();
    for (const [name, entry] of listed) index.set(name, entry);
  };
  const remove = async (key: string) => {
    index.delete(key);
    seenHere.delete(key);
    await blobs.delete(blobKeyOf(key));
  };
  await refresh();
  let refreshedAt = now();

  return {
    async get(key) {
      const found = await blobs.getBuffer(blobKeyOf(key));
      if (!found) {
        index.delete(key);
        return undefined;
      }
      const entry = decode(found.bytes, found.info.metadata);
      if (!entry) {
        await remove(key);
        return undefined;
      }
      if (now() >= entry.expiresAt) {
        await remove(key);
        recordEviction('expired');
        return undefined;
      }
      index.set(key, { size: found.bytes.byteLength, usedAt: now() });
      seenHere.add(key);
      return entry;
    },

    async put(key, entry) {
      const { image, ...fields } = entry;
      await blobs.put(blobKeyOf(key), image, { contentType: MIME_TYPES[entry.format], metadata: encode(fields) });
      if (now() - refreshedAt >= REFRESH_INTERVAL_MS) {
        refreshedAt = now();
        await refresh();
      }
      index.set(key, { size: image.byteLength, usedAt: now() });
      seenHere.add(key);
      let excess = total() - maxBytes;
      if (excess <= 0) return;
      // An entry larger than the whole bound is not kept either.
      let evicted = 0;
      for (const [oldest, { size }] of [...index].sort(([, a], [, b]) => a.usedAt - b.usedAt)) {
        if (excess <= 0) break;
        await remove(oldest);
        excess -= size;
        evicted += 1;
      }
      recordEviction('size', evicted);
    },

    sizeBytes: async () => total(),

    close: () => blobs.close(),
  };
}

type Fields = Omit<CacheEntry, 'image'>;

function encode(fields: Fields): Record<string, string> {
  return {
    format: fields.format,
    width: String(fields.width),
    height: String(fields.height),
    truncated: String(fields.truncated),
    'wait-ms': String(fields.waitMs),
    'created-at': String(fields.createdAt),
    'expires-at': String(fields.expiresAt),
  };
}

/** The entry, or undefined for a blob that is not one (foreign, or of another version). */
function decode(image: Buffer, metadata: Record<string, string>): CacheEntry | undefined {
  const numbers = ['width', 'height', 'wait-ms', 'created-at', 'expires-at'].map((name) => Number(metadata[name] ?? Number.NaN));
  const format = metadata.format as CaptureFormat;
  if (!numbers.every(Number.isFinite) || !(CAPTURE_FORMATS as readonly string[]).includes(format) || !['true', 'false'].includes(metadata.truncated ?? '')) return undefined;
  const [width, height, waitMs, createdAt, expiresAt] = numbers as [number, number, number, number, number];
  return { image, format, width, height, truncated: metadata.truncated === 'true', waitMs, createdAt, expiresAt };
}
