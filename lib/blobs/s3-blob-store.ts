/**
 * Blobs in one bucket of S3-compatible object storage (AWS S3, MinIO, versitygw, Ceph, R2, ...),
 * over fetch with requests signed by sigv4.ts. Five operations: PutObject, GetObject, HeadObject,
 * DeleteObject and ListObjectsV2. The content type is the object's, the caller's metadata its
 * `x-amz-meta-*` headers.
 *
 * S3 makes a PUT atomic (a reader sees the old object or the new one whole, and of racing PUTs one
 * wins whole), so nothing here needs temporary names. A body is collected up to its size bound
 * before the PUT (SigV4 signs its hash and S3 wants its length up front), so a put holds at most the
 * bound in memory and a body past it sends nothing. Each request has a deadline for its answer's
 * headers (timeoutMs); a streamed GET's body is then the reader's to pace.
 *
 * Credentials go into the signature only: never into an error, a log line or describe().
 */
import { Readable } from 'node:stream';
import {
  collectBounded,
  DEFAULT_CONTENT_TYPE,
  DEFAULT_MAX_BLOB_BYTES,
  validateBlobKey,
  validateMetadata,
  type BlobInfo,
  type BlobListing,
  type BlobStore,
} from './blob-store.ts';
import { canonicalQuery, EMPTY_PAYLOAD_HASH, encodeS3Path, sha256Hex, signRequest, type SigV4Credentials } from './sigv4.ts';

export interface S3BlobStoreOptions {
  /** Where the S3 API answers: `https://s3.eu-west-1.amazonaws.com`, `http://minio.storage:9000`. */
  endpoint: URL;
  bucket: string;
  region: string;
  /** `endpoint/bucket/key` (most self-hosted servers) rather than `bucket.endpoint/key` (virtual-hosted). */
  pathStyle: boolean;
  credentials: SigV4Credentials;
  maxBytes?: number;
  /** Deadline for each request's answer (its headers). Default 30 s. */
  timeoutMs?: number;
}

/** An answer of the S3 API that is not one the operation expects; carries S3's error code. */
export class S3Error extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(operation: string, status: number, code: string | undefined, message: string | undefined) {
    super(`S3 ${operation} answered ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`);
    this.name = 'S3Error';
    this.status = status;
    this.code = code;
  }
}

const META_PREFIX = 'x-amz-meta-';
export const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export async function openS3BlobStore(options: S3BlobStoreOptions): Promise<BlobStore> {
  const client = s3Client(options);
  // One request at open, so that a wrong endpoint, bucket or credential shows at start with S3's reason.
  await client.request('HeadBucket', 'HEAD', '', {}, { expect: [200] });
  const defaultMaxBytes = options.maxBytes ?? DEFAULT_MAX_BLOB_BYTES;

  const infoOf = (key: string, headers: Headers): BlobInfo => {
    const metadata: Record<string, string> = {};
    headers.forEach((value, name) => {
      if (name.startsWith(META_PREFIX)) metadata[name.slice(META_PREFIX.length)] = value;
    });
    return {
      key,
      size: Number(headers.get('content-length') ?? 0),
      contentType: headers.get('content-type') ?? DEFAULT_CONTENT_TYPE,
      metadata,
      lastModified: new Date(headers.get('last-modified') ?? Date.now()),
    };
  };

  return {
    async put(key, body, putOptions = {}) {
      validateBlobKey(key);
      const metadata = validateMetadata(putOptions.metadata);
      const bytes = await collectBounded(key, body, putOptions.maxBytes ?? defaultMaxBytes);
      const contentType = putOptions.contentType ?? DEFAULT_CONTENT_TYPE;
      const headers: Record<string, string> = { 'content-type': contentType };
      for (const [name, value] of Object.entries(metadata)) headers[META_PREFIX + name] = value;
      await client.request('PutObject', 'PUT', key, {}, { headers, body: bytes, expect: [200] });
      return { key, size: bytes.byteLength, contentType, metadata, lastModified: new Date() };
    },

    async get(key) {
      const response = await client.request('GetObject', 'GET', validateBlobKey(key), {}, { expect: [200, 404], stream: true });
      if (response.status === 404) return undefined;
      return { info: infoOf(key, response.headers), body: Readable.fromWeb(response.body as never) };
    },

    async getBuffer(key) {
      const response = await client.request('GetObject', 'GET', validateBlobKey(key), {}, { expect: [200, 404] });
      if (response.status === 404) return undefined;
      const bytes = Buffer.from(await response.arrayBuffer());
      return { info: { ...infoOf(key, response.headers), size: bytes.byteLength }, bytes };
    },

    async head(key) {
      const response = await client.request('HeadObject', 'HEAD', validateBlobKey(key), {}, { expect: [200, 404] });
      return response.status === 404 ? undefined : infoOf(key, response.headers);
    },

    async delete(key) {
      // S3 answers 204 for a key that holds nothing too; some servers answer 404.
      await client.request('DeleteObject', 'DELETE', validateBlobKey(key), {}, { expect: [200, 204, 404] });
    },

    async *list(prefix) {
      let token: string | undefined;
      do {
        const query: Record<string, string> = { 'list-type': '2', prefix, ...(token ? { 'continuation-token': token } : {}) };
        const response = await client.request('ListObjectsV2', 'GET', '', query, { expect: [200] });
        const page = parseListing(await response.text());
        yield* page.contents;
        token = page.nextToken;
      } while (token);
    },

    describe: () => `s3 bucket ${options.bucket} at ${options.endpoint.origin}${options.pathStyle ? ' (path style)' : ''}`,
    close: async () => undefined,
  };
}

/** Tests and first installs: makes the bucket unless it exists (owned by these credentials). */
export async function createS3Bucket(options: S3BlobStoreOptions): Promise<void> {
  // Outside us-east-1 the region must be named in the body.
  const body =
    options.region === 'us-east-1'
      ? undefined
      : Buffer.from(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>${options.region}</LocationConstraint></CreateBucketConfiguration>`);
  const response = await s3Client(options).request('CreateBucket', 'PUT', '', {}, { ...(body ? { body } : {}), expect: [200, 409] });
  if (response.status === 409) {
    const { code } = parseError(await response.text());
    if (code !== 'BucketAlreadyOwnedByYou') throw new S3Error('CreateBucket', 409, code, 'the bucket exists and is not owned by these credentials');
  }
}

/** Tests only: empties the bucket and removes it. */
export async function deleteS3Bucket(options: S3BlobStoreOptions): Promise<void> {
  const store = await openS3BlobStore(options);
  for await (const { key } of store.list('')) await store.delete(key);
  await s3Client(options).request('DeleteBucket', 'DELETE', '', {}, { expect: [204, 200] });
}

interface RequestOptions {
  headers?: Record<string, string>;
  body?: Buffer;
  /** Statuses that are answers; any other throws S3Error. */
  expect: number[];
  /** Leave the body unread for the caller (the deadline then covers the headers only). */
  stream?: boolean;
}

function s3Client(options: S3BlobStoreOptions) {
  if (!BUCKET_NAME.test(options.bucket)) throw new TypeError(`not an S3 bucket name: ${JSON.stringify(options.bucket)}`);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const urlOf = (key: string, query: Record<string, string>) => {
    const base = new URL(options.endpoint);
    const basePath = base.pathname.replace(/\/+$/, '');
    if (options.pathStyle) {
      base.pathname = `${basePath}/${options.bucket}${key ? `/${encodeS3Path(key)}` : '/'}`;
    } else {
      base.hostname = `${options.bucket}.${base.hostname}`;
      base.pathname = `${basePath}/${key ? encodeS3Path(key) : ''}`;
    }
    base.search = canonicalQuery(query);
    return base;
  };

  return {
    async request(operation: string, method: string, key: string, query: Record<string, string>, request: RequestOptions): Promise<Response> {
      const url = urlOf(key, query);
      const headers = signRequest({
        method,
        url,
        headers: request.headers ?? {},
        payloadHash: request.body ? sha256Hex(request.body) : EMPTY_PAYLOAD_HASH,
        region: options.region,
        credentials: options.credentials,
      });
      const controller = new AbortController();
      const deadline = setTimeout(() => controller.abort(new Error(`S3 ${operation} had no answer within ${timeoutMs} ms`)), timeoutMs);
      let response: Response;
      try {
        response = await fetch(url, { method, headers, ...(request.body ? { body: new Uint8Array(request.body.buffer, request.body.byteOffset, request.body.byteLength) as Uint8Array<ArrayBuffer> } : {}), signal: controller.signal, redirect: 'manual' });
        if (!request.stream) {
          // Read whole before the deadline is lifted: the answer is small (or the caller wants it whole).
          const bytes = Buffer.from(await response.arrayBuffer());
          response = new Response(method === 'HEAD' || response.status === 204 ? null : bytes, { status: response.status, headers: response.headers });
        }
      } catch (err) {
        const reason = controller.signal.aborted ? (controller.signal.reason as Error) : (err as Error);
        throw new S3Error(operation, 0, 'RequestFailed', `${reason.message} (${url.origin})`);
      } finally {
        clearTimeout(deadline);
      }
      if (!request.expect.includes(response.status)) {
        const { code, message } = method === 'HEAD' ? { code: undefined, message: undefined } : parseError(await response.text().catch(() => ''));
        throw new S3Error(operation, response.status, code, message);
      }
      return response;
    },
  };
}

function xmlText(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp|#(\d+)|#x([0-9a-fA-F]+));/g, (_, name: string, decimal?: string, hex?: string) =>
    decimal ? String.fromCodePoint(Number(decimal)) : hex ? String.fromCodePoint(parseInt(hex, 16)) : ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' } as Record<string, string>)[name]!,
  );
}

function tag(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return match ? xmlText(match[1]!) : undefined;
}

/** S3's error document: its Code and Message. */
export function parseError(xml: string): { code: string | undefined; message: string | undefined } {
  return { code: tag(xml, 'Code'), message: tag(xml, 'Message') };
}

/** ListObjectsV2's answer: its Contents, and the token of the next page when it is truncated. */
function parseListing(xml: string): { contents: BlobListing[]; nextToken: string | undefined } {
  const contents: BlobListing[] = [];
  for (const [, entry] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    contents.push({ key: tag(entry!, 'Key') ?? '', size: Number(tag(entry!, 'Size') ?? 0), lastModified: new Date(tag(entry!, 'LastModified') ?? 0) });
  }
  const truncated = tag(xml, 'IsTruncated') === 'true';
  return { contents, nextToken: truncated ? tag(xml, 'NextContinuationToken') : undefined };
}
