import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Hosted API keys: `vf_` and 32 random bytes in base64url (43 characters). Only the SHA-256 of the
 * whole key is stored, with a short prefix so that people can tell their keys apart in a list.
 */
export const KEY_PREFIX = 'vf_';
const SECRET_BYTES = 32;
const DISPLAY_CHARS = 8;
const KEY_SHAPE = /^vf_[A-Za-z0-9_-]{43}$/;

export interface GeneratedKey {
  /** The plaintext key: shown once to its owner, never stored or logged. */
  secret: string;
  hash: string;
  prefix: string;
}

export function generateApiKey(): GeneratedKey {
  const secret = `${KEY_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
  return { secret, hash: hashApiKey(secret), prefix: displayPrefix(secret) };
}

/**
 * A key's signing secret: `vfs_` and 32 random bytes in base64url. It signs render links
 * (HMAC-SHA256) and webhooks, so the server keeps it as it is (HMAC is
 * symmetric), in a field that no answer of the management API ever carries. Shown once, like the key.
 */
export const SIGNING_SECRET_PREFIX = 'vfs_';

export function generateSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

/** Hex SHA-256: the key is already 256 random bits, so a slow hash would add nothing. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** `vf_` and the first characters of the random part: enough to recognise a key, useless to guess it. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, KEY_PREFIX.length + DISPLAY_CHARS);
}

/** Cheap shape check, so that garbage never reaches the store. */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/**
 * Anything that starts like one of our keys or signing secrets, whole or not: it is a customer's
 * secret, never a Kubernetes token (those are JWTs), so it must not be sent on for a review.
 */
export function looksLikeViewfinderSecret(value: string): boolean {
  return value.startsWith(KEY_PREFIX) || value.startsWith(SIGNING_SECRET_PREFIX);
}

/** Constant-time comparison of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
