import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures, as Stripe signs them: `Viewfinder-Signature: t=<unix seconds>,v1=<hex>` where
 * v1 is HMAC-SHA256(secret, `${t}.${body}`). The timestamp is inside the signed text, so a receiver
 * that also checks it is recent refuses both forgeries and replays of an old delivery.
 */
export const SIGNATURE_HEADER = 'Viewfinder-Signature';

/** A receiver's default tolerance: deliveries signed longer ago than this are refused as replays. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

export function signatureHeader(secret: string, body: string, now: Date = new Date()): string {
  const timestamp = Math.floor(now.getTime() / 1000);
  return `t=${timestamp},v1=${signatureOf(secret, timestamp, body)}`;
}

/**
 * True when `header` carries a v1 signature of `body` made with `secret` within `toleranceSeconds`
 * of `now`. Compared in constant time.
 */
export function verifySignature(secret: string, header: string | undefined, body: string, options: { now?: Date; toleranceSeconds?: number } = {}): boolean {
  if (!header) return false;
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const [name, value] = item.trim().split('=', 2);
    if (name && value) parts.set(name, [...(parts.get(name) ?? []), value]);
  }
  // Decimal digits only, as signatureHeader writes it: Number() alone would also take 0x..., 1e9 or
  // " 12", which no signer writes and which the client libraries' parsers refuse.
  const written = parts.get('t')?.[0] ?? '';
  if (!/^\d{1,15}$/.test(written)) return false;
  const timestamp = Number(written);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(signatureOf(secret, timestamp, body), 'hex');
  return (parts.get('v1') ?? []).some((candidate) => {
    const given = Buffer.from(candidate, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
