/**
 * Webhook signatures (docs/async.md, "Webhooks"): `Viewfinder-Signature: t=<unix seconds>,v1=<hex>`,
 * where v1 is the HMAC-SHA256 of `<t>.<raw body>` with the signing secret of the key that submitted
 * the capture (self-hosted: WEBHOOK_SIGNING_SECRET). Verification takes the raw body, as received,
 * before any JSON parsing; compares in constant time; and refuses a timestamp further than the
 * tolerance from now, either way, so a recorded delivery cannot be replayed.
 *
 * Framework-agnostic: give it the raw body and the header, get the event or an error.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookSignatureError } from './errors.ts';
import type { WebhookEvent } from './types.ts';

export const SIGNATURE_HEADER = 'Viewfinder-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The raw body: the bytes received, or the same decoded as UTF-8. */
export type RawBody = string | Uint8Array;
/** The header as frameworks give it (Node's `req.headers[...]` may be a list). */
export type SignatureHeaderValue = string | readonly string[] | null | undefined;

export interface VerifyOptions {
  /** Seconds a delivery may be away from now, either way (default 300). */
  toleranceSeconds?: number;
  /** The time to check against (default: now). */
  now?: Date;
}

function hmac(secret: string, timestamp: number, body: RawBody): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
}

/** A `Viewfinder-Signature` header for a body: what the server sends (for tests of your receiver). */
export function signWebhook(body: RawBody, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, body).toString('hex')}`;
}

/** Why a header does not verify, or undefined when it does. */
function refusal(body: RawBody, header: SignatureHeaderValue, secret: string, options: VerifyOptions): string | undefined {
  const text = typeof header === 'string' ? header : header ? header.join(',') : '';
  if (!text) return `no ${SIGNATURE_HEADER} header`;
  const parts = new Map<string, string[]>();
  for (const item of text.split(',')) {
    const [name, value] = item.trim().split('=', 2);
    if (name && value) parts.set(name, [...(parts.get(name) ?? []), value]);
  }
  const written = parts.get('t')?.[0] ?? '';
  // Decimal digits only, as the server writes and checks it (Number() alone would take 0x... or 1e9).
  if (!/^\d{1,15}$/.test(written)) return 'the signature header has no timestamp';
  const timestamp = Number(written);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) return `the signature's timestamp is more than ${tolerance} s from now`;
  const expected = hmac(secret, timestamp, body);
  const matches = (parts.get('v1') ?? []).some((candidate) => {
    const given = Buffer.from(candidate, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? undefined : 'no v1 signature matches the body';
}

/** True when the header carries a v1 signature of the body, made with the secret within the tolerance. */
export function verifyWebhookSignature(body: RawBody, header: SignatureHeaderValue, secret: string, options: VerifyOptions = {}): boolean {
  return refusal(body, header, secret, options) === undefined;
}

/** The verified event, parsed from the raw body; throws WebhookSignatureError otherwise. */
export function constructWebhookEvent(body: RawBody, header: SignatureHeaderValue, secret: string, options: VerifyOptions = {}): WebhookEvent {
  const reason = refusal(body, header, secret, options);
  if (reason !== undefined) throw new WebhookSignatureError(`Webhook refused: ${reason}`);
  return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as WebhookEvent;
}
