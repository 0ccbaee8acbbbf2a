import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { IssuedKeyView } from '../../../../lib/management.ts';
import { SESSION_COOKIE } from './sessions.ts';

/**
 * The one-time view of a new or regenerated key (POST → 303 → GET): the POST puts the key in a
 * short-lived cookie, encrypted (AES-256-GCM) with a key derived from the browser's session token,
 * and the GET that shows it clears the cookie. So a reload shows nothing new and creates nothing;
 * the plaintext is kept neither in the store nor in any process (another API replica can answer
 * the GET); and the cookie alone, or a copy of the store, opens nothing.
 */
export const ISSUED_PATH = '/dashboard/keys/issued';
const ISSUED_COOKIE = 'vf_issued';
const MAX_AGE_MS = 5 * 60_000;

export interface IssuedOnce {
  kind: 'created' | 'regenerated';
  issued: IssuedKeyView;
}

function keyOf(ctx: Context): Buffer | undefined {
  const sessionToken = ctx.cookies.get(SESSION_COOKIE);
  return sessionToken ? createHash('sha256').update(`viewfinder issued key\n${sessionToken}`).digest() : undefined;
}

const cookieOptions = (ctx: Context) => ({ path: ISSUED_PATH, httpOnly: true, sameSite: 'strict' as const, secure: ctx.secure, overwrite: true });

/** Keeps the key for the one GET that shows it. Without a session cookie (single sign-on only) there is nothing to bind it to. */
export function keepForOneView(ctx: Context, value: IssuedOnce): boolean {
  const key = keyOf(ctx);
  if (!key) return false;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  ctx.cookies.set(ISSUED_COOKIE, Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url'), { ...cookieOptions(ctx), maxAge: MAX_AGE_MS });
  return true;
}

/** The key kept by the POST, once: the cookie is cleared whatever it held. */
export function takeOneView(ctx: Context): IssuedOnce | undefined {
  const cookie = ctx.cookies.get(ISSUED_COOKIE);
  if (!cookie) return undefined;
  ctx.cookies.set(ISSUED_COOKIE, null, cookieOptions(ctx));
  const key = keyOf(ctx);
  const raw = Buffer.from(cookie, 'base64url');
  if (!key || raw.length < 29) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as IssuedOnce;
  } catch {
    // Another session's cookie, or a tampered one.
    return undefined;
  }
}
