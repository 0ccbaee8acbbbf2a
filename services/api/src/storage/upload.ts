/**
 * One object written to a client's bucket: a single signed S3 PutObject, through the same network
 * guard as pages and webhooks. The endpoint's name is resolved once, every address it resolves to is
 * checked (no loopback, private, link-local or metadata address unless STORAGE_ENDPOINT_ALLOWLIST
 * allows it), and the connection goes to the checked address itself, so a DNS answer that changes
 * after the check is never used. A refused endpoint gets no byte at all.
 *
 * Nothing is left half-written: the body is whole in memory (the capture), bounded before anything
 * is sent, and goes as one PUT with its Content-Length and its SHA-256 signed, which S3 stores
 * atomically or not at all (no multipart upload to abandon). The attempt has one overall deadline.
 *
 * Credentials go into the signature only. Every failure is a StorageFailure whose message says why
 * (the endpoint, S3's code and message, the deadline) and never holds the key id or the secret.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { parseError } from '../../../../lib/blobs/s3-blob-store.ts';
import { encodeS3Path, sha256Hex, signRequest } from '../../../../lib/blobs/sigv4.ts';
import { isHttpError } from '../../../../lib/errors.ts';
import type { DestinationCredentials, StorageDestination } from '../../../../lib/store/destinations.ts';
import type { Destination, NetworkGuard } from '../../../renderer/src/guard/network-guard.ts';

export const UPLOAD_OUTCOMES = ['uploaded', 'refused', 'rejected', 'unreachable', 'timeout', 'too_large'] as const;
export type UploadOutcome = (typeof UPLOAD_OUTCOMES)[number];

/**
 * Why an upload did not happen: refused (the guard refused the endpoint: nothing was sent),
 * rejected (the destination answered an error: wrong keys, no such bucket...), unreachable (the
 * name does not resolve, the connection failed), timeout, too_large (past STORAGE_MAX_UPLOAD_MB).
 */
export class StorageFailure extends Error {
  override readonly name = 'StorageFailure';
  readonly outcome: Exclude<UploadOutcome, 'uploaded'>;
  constructor(outcome: Exclude<UploadOutcome, 'uploaded'>, message: string) {
    super(message);
    this.outcome = outcome;
  }
  /** What another attempt cannot change: a refused endpoint, an object too large. */
  get permanent(): boolean {
    return this.outcome === 'refused' || this.outcome === 'too_large';
  }
}

type Place = Pick<StorageDestination, 'endpoint' | 'bucket' | 'pathStyle'>;

/** The object's URL, unsigned: `endpoint/bucket/key` (path style) or `bucket.endpoint/key`. */
export function objectUrl(destination: Place, key: string): URL {
  const url = new URL(destination.endpoint);
  const base = url.pathname.replace(/\/+$/, '');
  if (destination.pathStyle) url.pathname = `${base}/${destination.bucket}/${encodeS3Path(key)}`;
  else {
    url.hostname = `${destination.bucket}.${url.hostname}`;
    url.pathname = `${base}/${encodeS3Path(key)}`;
  }
  url.search = '';
  return url;
}

/** The host the upload connects to: the endpoint's, or the bucket's under it (virtual-hosted style). */
export function uploadHost(destination: Place): string {
  return objectUrl(destination, 'x').hostname;
}

/**
 * Resolves the upload's host through the guard within `timeoutMs`: the pinned address, or a
 * StorageFailure (refused for an address the guard denies, unreachable for a name that does not
 * resolve, timeout).
 */
export async function resolveEndpoint(guard: NetworkGuard, host: string, timeoutMs: number): Promise<Destination> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    const answer = await Promise.race([guard.resolve(host), deadline]);
    if (answer === 'timeout') throw new StorageFailure('timeout', `storage endpoint ${host} did not resolve within ${timeoutMs} ms`);
    return answer;
  } catch (err) {
    if (err instanceof StorageFailure) throw err;
    if (isHttpError(err) && (err.status === 403 || err.status === 400)) throw new StorageFailure('refused', endpointRefusal(err.message));
    throw new StorageFailure('unreachable', `storage endpoint ${host} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
}

/** The guard speaks of captures; its refusal says the same of a storage endpoint, and which variable opens it. */
export function endpointRefusal(message: string): string {
  return `storage endpoint refused: ${message
    .replace(/^Forbidden: /, '')
    .replace('only public addresses may be captured (see PRIVATE_NETWORK_ALLOWLIST)', 'only public addresses may receive uploads (see STORAGE_ENDPOINT_ALLOWLIST)')}`;
}

export interface PutRequest {
  destination: StorageDestination;
  credentials: DestinationCredentials;
  key: string;
  body: Buffer;
  contentType: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

/** Writes the object; answers its ETag (when the server gives one). */
export async function putObject(guard: NetworkGuard, request: PutRequest): Promise<{ etag: string | undefined }> {
  const { destination, credentials, body } = request;
  if (body.byteLength > request.maxBytes) {
    throw new StorageFailure('too_large', `the capture is ${body.byteLength} bytes, more than the ${request.maxBytes} an upload may write (STORAGE_MAX_UPLOAD_MB)`);
  }
  const started = Date.now();
  const url = objectUrl(destination, request.key);
  const pinned = await resolveEndpoint(guard, url.hostname, request.timeoutMs);
  const remainingMs = Math.max(1, request.timeoutMs - (Date.now() - started));
  const headers = signRequest({
    method: 'PUT',
    url,
    headers: { 'content-type': request.contentType, 'content-length': String(body.byteLength) },
    payloadHash: sha256Hex(body),
    region: destination.region,
    credentials,
  });
  try {
    return await send(url, pinned, headers, body, remainingMs, request.signal);
  } catch (err) {
    if (err instanceof StorageFailure) throw new StorageFailure(err.outcome, scrub(err.message, credentials));
    throw err;
  }
}

function send(url: URL, pinned: Destination, headers: Record<string, string>, body: Buffer, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ etag: string | undefined }> {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (err: null, addresses: Destination[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const where = `${url.protocol}//${url.host}`;
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, { method: 'PUT', lookup, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        // An error document is small; anything past 64 KiB is not read.
        if (size < 65_536) chunks.push(chunk);
        size += chunk.byteLength;
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status === 200) {
          const etag = res.headers.etag;
          resolve({ etag: typeof etag === 'string' ? etag : undefined });
          return;
        }
        const { code, message } = parseError(Buffer.concat(chunks).toString('utf8'));
        reject(new StorageFailure('rejected', `storage destination ${where} answered ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`));
      });
      res.on('error', (err) => reject(new StorageFailure('unreachable', `storage destination ${where}: ${err.message}`)));
    });
    const timer = setTimeout(() => fail(new StorageFailure('timeout', `storage destination ${where} did not finish its answer within the upload deadline (STORAGE_UPLOAD_TIMEOUT_MS)`)), timeoutMs);
    const onAbort = () => fail(new StorageFailure('timeout', `upload to ${where} stopped: ${signal?.reason instanceof Error ? signal.reason.message : 'aborted'}`));
    function fail(err: StorageFailure) {
      reject(err);
      req.destroy(err);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
    req.on('error', (err) => reject(err instanceof StorageFailure ? err : new StorageFailure('unreachable', `storage destination ${where} could not be reached: ${(err as NodeJS.ErrnoException).code ?? err.message}`)));
    if (signal?.aborted) onAbort();
    req.end(body);
  });
}

/** A server may echo what it was sent; neither the key id nor the secret leaves this module. */
function scrub(message: string, credentials: DestinationCredentials): string {
  let clean = message;
  for (const secret of [credentials.secretAccessKey, credentials.accessKeyId]) if (secret) clean = clean.split(secret).join('[redacted]');
  return clean;
}
