/**
 * The embedded result cache: one file per entry under DATA_DIR, bounded in size, evicting the least
 * recently used entries first. Recency survives a restart as each file's mtime, which a hit renews.
 *
 * A file is a small header (magic, metadata length), the metadata as JSON, then the image bytes.
 * It is written to a temporary name and renamed, so that a reader never sees half an entry. Another
 * process on the same DATA_DIR reads the same files; only the size accounting is per process.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { recordEviction } from './metrics.ts';
import type { CacheEntry, ResultCache } from './result-cache.ts';

const MAGIC = Buffer.from('VFC1');
const SUFFIX = '.entry';
const KEY = /^[0-9a-f]{64}$/;

export interface DiskCacheOptions {
  dir: string;
  /** Bound on the bytes of all entry files; the least recently used go first past it. */
  maxBytes: number;
  now?: () => number;
}

export async function openDiskCache(options: DiskCacheOptions): Promise<ResultCache> {
  const { dir, maxBytes } = options;
  const now = options.now ?? Date.now;
  await mkdir(dir, { recursive: true });

  /** Entry sizes in recency order: the first key is the least recently used. */
  const sizes = new Map<string, number>();
  let total = 0;
  const forget = (key: string) => {
    total -= sizes.get(key) ?? 0;
    sizes.delete(key);
  };
  const fileOf = (key: string) => {
    if (!KEY.test(key)) throw new Error('result cache keys are SHA-256 hex digests');
    return path.join(dir, key + SUFFIX);
  };
  const remove = async (key: string) => {
    forget(key);
    await unlink(fileOf(key)).catch(() => undefined);
  };

  // Rebuild the index from the files, oldest use first; temporary files are writes that never finished.
  const found: { key: string; size: number; usedAt: number }[] = [];
  for (const name of await readdir(dir)) {
    const file = path.join(dir, name);
    if (name.endsWith('.tmp')) {
      await unlink(file).catch(() => undefined);
      continue;
    }
    const key = name.slice(0, -SUFFIX.length);
    if (!name.endsWith(SUFFIX) || !KEY.test(key)) continue;
    const info = await stat(file).catch(() => undefined);
    if (info) found.push({ key, size: info.size, usedAt: info.mtimeMs });
  }
  for (const { key, size } of found.sort((a, b) => a.usedAt - b.usedAt)) {
    sizes.set(key, size);
    total += size;
  }

  return {
    async get(key) {
      const file = fileOf(key);
      const bytes = await readFile(file).catch(() => undefined);
      const entry = bytes && decode(bytes);
      if (!entry) {
        if (sizes.has(key) || bytes) await remove(key);
        return undefined;
      }
      if (now() >= entry.expiresAt) {
        await remove(key);
        recordEviction('expired');
        return undefined;
      }
      sizes.delete(key);
      sizes.set(key, bytes.byteLength);
      const usedAt = new Date(now());
      await utimes(file, usedAt, usedAt).catch(() => undefined);
      return entry;
    },

    async put(key, entry) {
      const file = fileOf(key);
      const bytes = encode(entry);
      const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(temporary, bytes);
      const storedAt = new Date(now());
      await utimes(temporary, storedAt, storedAt);
      await rename(temporary, file);
      forget(key);
      sizes.set(key, bytes.byteLength);
      total += bytes.byteLength;
      // An entry larger than the whole bound is not kept either.
      let evicted = 0;
      for (const oldest of sizes.keys()) {
        if (total <= maxBytes) break;
        await remove(oldest);
        evicted += 1;
      }
      recordEviction('size', evicted);
    },

    sizeBytes: async () => total,

    close: async () => undefined,
  };
}

type Metadata = Omit<CacheEntry, 'image'>;

function encode(entry: CacheEntry): Buffer {
  const { image, ...metadata } = entry;
  const json = Buffer.from(JSON.stringify(metadata));
  const header = Buffer.alloc(8);
  MAGIC.copy(header, 0);
  header.writeUInt32BE(json.byteLength, 4);
  return Buffer.concat([header, json, image]);
}

/** The entry in a file, or undefined for a file that is not one (truncated, foreign, older format). */
function decode(bytes: Buffer): CacheEntry | undefined {
  if (bytes.byteLength < 8 || !bytes.subarray(0, 4).equals(MAGIC)) return undefined;
  const length = bytes.readUInt32BE(4);
  if (8 + length > bytes.byteLength) return undefined;
  try {
    const metadata = JSON.parse(bytes.toString('utf8', 8, 8 + length)) as Metadata;
    return { ...metadata, image: bytes.subarray(8 + length) };
  } catch {
    return undefined;
  }
}
