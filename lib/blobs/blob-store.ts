/**
 * The service's own blobs behind one port (ARCHITECTURE.md, "Blobs behind one port"): bytes under
 * a key, with a content type and a few string fields of metadata. Three implementations pass one
 * conformance suite (test/lib/blobs/conformance.ts): a local directory (the embedded default,
 * directory-blob-store.ts), MongoDB GridFS (gridfs-blob-store.ts) and S3-compatible object
 * storage (s3-blob-store.ts). open.ts picks one from the configuration.
 *
 * What every implementation promises:
 * - A put is all or nothing: a reader sees the previous value or the whole new one, never part of
 *   it; of concurrent puts of one key, one whole value remains.
 * - A put past its size bound fails with BlobTooLarge and leaves the key as it was.
 * - A missing key reads as undefined; deleting one is not an error.
 * - Keys are relative paths of safe characters (validateBlobKey), so that each implementation
 *   stores them as they are (a file path, a GridFS name, an object key) with no escaping.
 * - Callers never use a key that is a directory of another (`a` beside `a/b`): S3 itself allows
 *   it, but S3 servers over a filesystem (versitygw's posix backend, MinIO) refuse the second put.
 */
import { Readable } from 'node:stream';

export interface BlobInfo {
  key: string;
  /** Bytes of content. */
  size: number;
  contentType: string;
  /** The caller's own fields (a few short strings), stored beside the bytes. */
  metadata: Record<string, string>;
  lastModified: Date;
}

/** What list answers: S3 lists neither content types nor metadata, so no implementation does. */
export type BlobListing = Pick<BlobInfo, 'key' | 'size' | 'lastModified'>;

export interface PutOptions {
  /** Default: application/octet-stream. */
  contentType?: string;
  metadata?: Record<string, string>;
  /** A body past this many bytes is refused (BlobTooLarge) and nothing is written. Default: the store's own bound. */
  maxBytes?: number;
}

export interface StoredBlob {
  info: BlobInfo;
  /** The bytes, streamed; the caller must consume or destroy it. */
  body: Readable;
}

export interface BlobStore {
  /** Writes (or replaces) the blob; a Readable body is streamed in and counted against the bound. */
  put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<BlobInfo>;
  /** The blob as a stream, or undefined when the key holds none. */
  get(key: string): Promise<StoredBlob | undefined>;
  /** The blob's bytes read whole, or undefined when the key holds none. */
  getBuffer(key: string): Promise<{ info: BlobInfo; bytes: Buffer } | undefined>;
  /** The blob's description without its bytes, or undefined. */
  head(key: string): Promise<BlobInfo | undefined>;
  /** Removes the blob; a key that holds none is not an error. */
  delete(key: string): Promise<void>;
  /** Every blob whose key starts with `prefix` (a plain string prefix, as S3's), in key order. */
  list(prefix: string): AsyncIterable<BlobListing>;
  /** For logs: which implementation and where, never a credential. */
  describe(): string;
  close(): Promise<void>;
}

/** A put refused for its size: nothing was written. */
export class BlobTooLarge extends Error {
  readonly maxBytes: number;
  constructor(key: string, maxBytes: number) {
    super(`blob ${key} is larger than its bound of ${maxBytes} bytes`);
    this.name = 'BlobTooLarge';
    this.maxBytes = maxBytes;
  }
}

/** The bound when a put names none: 256 MiB, past any capture the renderer makes. */
export const DEFAULT_MAX_BLOB_BYTES = 256 * 1024 * 1024;
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/**
 * Segments of letters, digits and `-_.=+`, none starting with a dot, joined by single slashes;
 * at most 512 characters. Dots lead no segment so that `..` cannot climb out of a directory and the
 * directory implementation keeps its temporary files under a dot-name no key can reach.
 */
export const BLOB_KEY_SEGMENT = /^[A-Za-z0-9_=+-][A-Za-z0-9._=+-]*$/;

export function validateBlobKey(key: string): string {
  if (key.length === 0 || key.length > 512 || !key.split('/').every((segment) => BLOB_KEY_SEGMENT.test(segment))) {
    throw new TypeError(`not a blob key: ${JSON.stringify(key.slice(0, 100))} (segments of [A-Za-z0-9._=+-], not starting with a dot, joined by /)`);
  }
  return key;
}

/** Metadata names are lower-case words (S3 folds header names to lower case); values are printable ASCII. */
const METADATA_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const METADATA_VALUE = /^[\x20-\x7e]{0,1024}$/;

export function validateMetadata(metadata: Record<string, string> = {}): Record<string, string> {
  for (const [name, value] of Object.entries(metadata)) {
    if (!METADATA_NAME.test(name) || typeof value !== 'string' || !METADATA_VALUE.test(value)) {
      throw new TypeError(`blob metadata ${JSON.stringify(name)} must be a lower-case name with a printable ASCII value`);
    }
  }
  return { ...metadata };
}

/** The body as a stream of Buffers that fails with BlobTooLarge once more than maxBytes have passed. */
export function boundedChunks(key: string, body: Buffer | Readable, maxBytes: number): AsyncIterable<Buffer> {
  if (Buffer.isBuffer(body)) {
    if (body.byteLength > maxBytes) throw new BlobTooLarge(key, maxBytes);
    return (async function* () {
      yield body;
    })();
  }
  return (async function* () {
    let seen = 0;
    for await (const chunk of body) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array | string);
      seen += bytes.byteLength;
      if (seen > maxBytes) {
        body.destroy();
        throw new BlobTooLarge(key, maxBytes);
      }
      yield bytes;
    }
  })();
}

/** The whole body in memory, refused past maxBytes (memory held is at most the bound). */
export async function collectBounded(key: string, body: Buffer | Readable, maxBytes: number): Promise<Buffer> {
  if (Buffer.isBuffer(body)) {
    if (body.byteLength > maxBytes) throw new BlobTooLarge(key, maxBytes);
    return body;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of boundedChunks(key, body, maxBytes)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** getBuffer in terms of get, for implementations with nothing better. */
export async function getWhole(store: Pick<BlobStore, 'get'>, key: string): Promise<{ info: BlobInfo; bytes: Buffer } | undefined> {
  const blob = await store.get(key);
  return blob && { info: blob.info, bytes: await readAll(blob.body) };
}
