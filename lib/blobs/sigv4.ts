/**
 * AWS Signature Version 4 for S3 requests (the header form), as AWS specifies it: a canonical
 * request, a string to sign over its hash, and a signing key derived from the secret, the date,
 * the region and the service. s3-blob-store.ts signs every request with it; the tests check it
 * against AWS's published example and against a real gateway (versitygw) that verifies signatures.
 *
 * Why not @aws-sdk/client-s3: see docs/hosted.md, "Blob storage". The signer is the one part of an
 * S3 client that must be exactly right, and it is small; the rest of what this project needs
 * (five operations on one bucket) is a few lines over fetch.
 */
import { createHash, createHmac } from 'node:crypto';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS) carry one; sent as x-amz-security-token. */
  sessionToken?: string | undefined;
}

export interface SignableRequest {
  method: string;
  /** Its path must already be encoded as it goes on the wire (encodeS3Path). */
  url: URL;
  /** Headers to send and sign, beside the ones the signer adds; names in any case. */
  headers: Record<string, string>;
  /** Hex SHA-256 of the body (sha256Hex), or UNSIGNED-PAYLOAD. */
  payloadHash: string;
  region: string;
  service?: string;
  credentials: SigV4Credentials;
  now?: Date;
}

export const EMPTY_PAYLOAD_HASH = createHash('sha256').digest('hex');

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** RFC 3986 encoding, as SigV4 wants it: everything but A-Z a-z 0-9 - . _ ~ as %XX. */
export function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** An object key as a URL path: each segment encoded, the slashes kept (S3 does not encode twice). */
export function encodeS3Path(key: string): string {
  return key.split('/').map(encodeRfc3986).join('/');
}

/** The query as SigV4 canonicalizes it, which is also how it goes on the wire: sorted, each part encoded. */
export function canonicalQuery(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([name, value]) => [encodeRfc3986(name), encodeRfc3986(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** `20130524T000000Z` */
function amzDate(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/**
 * The headers to send: the request's own, plus x-amz-date, x-amz-content-sha256, the session token
 * when there is one, and Authorization. Host is signed as the URL's (fetch sends exactly that).
 */
export function signRequest(request: SignableRequest): Record<string, string> {
  const { method, url, payloadHash, region, credentials } = request;
  const service = request.service ?? 's3';
  const stamp = amzDate(request.now ?? new Date());
  const date = stamp.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers['x-amz-date'] = stamp;
  headers['x-amz-content-sha256'] = payloadHash;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;

  const signed: Record<string, string> = { ...headers, host: url.host };
  const names = Object.keys(signed).sort();
  const canonicalHeaders = names.map((name) => `${name}:${signed[name]!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const query = Object.fromEntries(url.searchParams);
  const canonicalRequest = [method, url.pathname || '/', canonicalQuery(query), canonicalHeaders, signedHeaders, payloadHash].join('\n');

  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date), region), service), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/** S3 refuses a presigned URL that claims to last longer than 7 days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export interface PresignRequest {
  method: string;
  /** Its path already encoded as it goes on the wire (encodeS3Path); any query it has is signed too. */
  url: URL;
  region: string;
  service?: string;
  credentials: SigV4Credentials;
  /** 1 to MAX_PRESIGN_SECONDS. */
  expiresSeconds: number;
  now?: Date;
}

/**
 * A presigned URL (SigV4's query form): the signature and its scope ride in the query, with only
 * `host` signed and the payload UNSIGNED-PAYLOAD, so that anyone holding the URL may make exactly
 * this request until it expires. The secret itself never appears in it.
 */
export function presignUrl(request: PresignRequest): URL {
  const { method, region, credentials, expiresSeconds } = request;
  if (!Number.isInteger(expiresSeconds) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGN_SECONDS) {
    throw new RangeError(`a presigned URL lasts 1 to ${MAX_PRESIGN_SECONDS} seconds`);
  }
  const service = request.service ?? 's3';
  const stamp = amzDate(request.now ?? new Date());
  const scope = `${stamp.slice(0, 8)}/${region}/${service}/aws4_request`;
  const url = new URL(request.url);
  const query: Record<string, string> = {
    ...Object.fromEntries(url.searchParams),
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${credentials.accessKeyId}/${scope}`,
    'X-Amz-Date': stamp,
    'X-Amz-Expires': String(expiresSeconds),
    'X-Amz-SignedHeaders': 'host',
    ...(credentials.sessionToken ? { 'X-Amz-Security-Token': credentials.sessionToken } : {}),
  };
  const canonicalRequest = [method, url.pathname || '/', canonicalQuery(query), `host:${url.host}\n`, 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, stamp.slice(0, 8)), region), service), 'aws4_request');
  url.search = `${canonicalQuery(query)}&X-Amz-Signature=${createHmac('sha256', signingKey).update(stringToSign).digest('hex')}`;
  return url;
}
