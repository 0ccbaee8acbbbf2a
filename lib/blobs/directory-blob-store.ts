/**
 * Blobs as files under one directory: the embedded default (under DATA_DIR/blobs). A key's
 * segments are directories and its last one a file named `<segment>.blob` (so that `a` and `a/b`
 * can both be keys); a file is a small header (magic, metadata length), the content type and
 * metadata as JSON, then the bytes.
 *
 * A put writes a temporary file under `.tmp/` (no key can start with a dot) and renames it into
 * place: a reader, on this process or another on the same directory, sees the old file or the new
 * one, never half of one, and of two puts of one key the later rename wins whole. A reader holds
 * the file it opened, so a replacement or delete meanwhile does not cut its stream short.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import {
  BLOB_KEY_SEGMENT,
  boundedChunks,
  DEFAULT_CONTENT_TYPE,
  DEFAULT_MAX_BLOB_BYTES,
  validateBlobKey,
  validateMetadata,
  type BlobInfo,
  type BlobListing,
  type BlobStore,
} from './blob-store.ts';

const MAGIC = Buffer.from('VFB1');
const HEADER_BYTES = 8;
const SUFFIX = '.blob';
const TEMPORARY = '.tmp';
/** Temporary files older than this at open are writes that a killed process never finished. */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

export interface DirectoryBlobStoreOptions {
  dir: string;
  maxBytes?: number;
}

interface Header {
  contentType: string;
  metadata: Record<string, string>;
}

export async function openDirectoryBlobStore(options: DirectoryBlobStoreOptions): Promise<BlobStore> {
  const root = path.resolve(options.dir);
  const temporaryDir = path.join(root, TEMPORARY);
  const defaultMaxBytes = options.maxBytes ?? DEFAULT_MAX_BLOB_BYTES;
  await mkdir(temporaryDir, { recursive: true });
  await removeStaleTemporaries(temporaryDir);

  const fileOf = (key: string) => {
    const segments = validateBlobKey(key).split('/');
    // A directory named like a file would hide the file of a shorter key (`a` is `a.blob`).
    if (segments.slice(0, -1).some((segment) => segment.endsWith(SUFFIX))) throw new TypeError(`not a blob key here: a directory segment of ${key} ends in ${SUFFIX}`);
    return path.join(root, ...segments.slice(0, -1), segments.at(-1) + SUFFIX);
  };

  /** The open file, its header and where its bytes start; undefined when the key holds nothing. */
  const openBlob = async (key: string): Promise<{ handle: FileHandle; info: BlobInfo; offset: number } | undefined> => {
    const file = fileOf(key);
    const handle = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
      throw err;
    });
    if (!handle) return undefined;
    try {
      const { size, mtime } = await handle.stat();
      const head = Buffer.alloc(HEADER_BYTES);
      await handle.read(head, 0, HEADER_BYTES, 0);
      if (!head.subarray(0, 4).equals(MAGIC)) throw new Error(`${file} is not a blob file`);
      const length = head.readUInt32BE(4);
      const json = Buffer.alloc(length);
      await handle.read(json, 0, length, HEADER_BYTES);
      const header = JSON.parse(json.toString('utf8')) as Header;
      const offset = HEADER_BYTES + length;
      return { handle, offset, info: { key, size: size - offset, contentType: header.contentType, metadata: header.metadata, lastModified: mtime } };
    } catch (err) {
      await handle.close();
      throw err;
    }
  };

  const store: BlobStore = {
    async put(key, body, options = {}) {
      const file = fileOf(key);
      const maxBytes = options.maxBytes ?? defaultMaxBytes;
      const header: Header = { contentType: options.contentType ?? DEFAULT_CONTENT_TYPE, metadata: validateMetadata(options.metadata) };
      const json = Buffer.from(JSON.stringify(header));
      const prefix = Buffer.alloc(HEADER_BYTES);
      MAGIC.copy(prefix);
      prefix.writeUInt32BE(json.byteLength, 4);
      const temporary = path.join(temporaryDir, `${randomBytes(12).toString('hex')}.tmp`);
      try {
        const chunks = boundedChunks(key, body, maxBytes);
        await pipeline(
          Readable.from(
            (async function* () {
              yield Buffer.concat([prefix, json]);
              yield* chunks;
            })(),
          ),
          createWriteStream(temporary, { flags: 'wx' }),
        );
        // A delete of the last key in a directory removes the directory: make it again and retry.
        for (let attempt = 1; ; attempt++) {
          await mkdir(path.dirname(file), { recursive: true });
          try {
            await rename(temporary, file);
            break;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw err;
          }
        }
      } catch (err) {
        await unlink(temporary).catch(() => undefined);
        throw err;
      }
      const info = await stat(file);
      return { key, size: info.size - prefix.byteLength - json.byteLength, contentType: header.contentType, metadata: header.metadata, lastModified: info.mtime };
    },

    async get(key) {
      const opened = await openBlob(key);
      if (!opened) return undefined;
      return { info: opened.info, body: opened.handle.createReadStream({ start: opened.offset, autoClose: true }) };
    },

    async getBuffer(key) {
      const opened = await openBlob(key);
      if (!opened) return undefined;
      try {
        const bytes = Buffer.alloc(opened.info.size);
        let read = 0;
        while (read < bytes.byteLength) {
          const { bytesRead } = await opened.handle.read(bytes, read, bytes.byteLength - read, opened.offset + read);
          if (bytesRead === 0) break;
          read += bytesRead;
        }
        return { info: opened.info, bytes: bytes.subarray(0, read) };
      } finally {
        await opened.handle.close();
      }
    },

    async head(key) {
      const opened = await openBlob(key);
      await opened?.handle.close();
      return opened?.info;
    },

    async delete(key) {
      const file = fileOf(key);
      await unlink(file).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
      });
      // Empty directories go with their last blob, up to the root (a put that races it retries).
      for (let dir = path.dirname(file); dir !== root && dir.startsWith(root); dir = path.dirname(dir)) {
        if (!(await rmdir(dir).then(() => true, () => false))) break;
      }
    },

    async *list(prefix) {
      // Start at the deepest directory the prefix names whole; filter the rest by the string.
      const slash = prefix.lastIndexOf('/');
      const base = slash < 0 ? '' : prefix.slice(0, slash);
      if (base && base.split('/').some((segment) => !BLOB_KEY_SEGMENT.test(segment))) return;
      const found: BlobListing[] = [];
      await walk(path.join(root, ...(base ? base.split('/') : [])), base, prefix, found);
      yield* found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    describe: () => `files in ${root}`,
    close: async () => undefined,
  };
  return store;
}

async function walk(dir: string, keyPrefix: string, wanted: string, found: BlobListing[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
    throw err;
  });
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const joined = keyPrefix ? `${keyPrefix}/` : '';
    if (entry.isDirectory()) {
      const sub = joined + entry.name;
      // Only directories that can hold a key with the prefix.
      if (sub.startsWith(wanted) || wanted.startsWith(`${sub}/`) || `${sub}/`.startsWith(wanted)) await walk(path.join(dir, entry.name), sub, wanted, found);
    } else if (entry.isFile() && entry.name.endsWith(SUFFIX)) {
      const key = joined + entry.name.slice(0, -SUFFIX.length);
      if (!key.startsWith(wanted)) continue;
      const info = await stat(path.join(dir, entry.name)).catch(() => undefined);
      if (!info) continue; // deleted while we looked
      const headerBytes = await headerLength(path.join(dir, entry.name));
      if (headerBytes !== undefined) found.push({ key, size: info.size - headerBytes, lastModified: info.mtime });
    }
  }
}

async function headerLength(file: string): Promise<number | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEADER_BYTES, 0);
    if (bytesRead < HEADER_BYTES || !head.subarray(0, 4).equals(MAGIC)) return undefined;
    return HEADER_BYTES + head.readUInt32BE(4);
  } finally {
    await handle.close();
  }
}

async function removeStaleTemporaries(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_TEMPORARY_MS) await rm(file, { force: true });
  }
}
