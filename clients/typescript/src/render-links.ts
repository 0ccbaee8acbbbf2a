/**
 * Signed render links (docs/render-links.md): `GET /api/render?<options>&key=<key id>&expires=<unix
 * time>&signature=<hex>`, where the signature is the HMAC-SHA256, with the key's signing secret, of
 * the exact query before `&signature=`. The query is form-encoded as the WHATWG URLSearchParams
 * serializer does, which is what the server reads and what clients/vectors/render-links.json holds.
 *
 * Signing needs the signing secret: do it on your server, never in a browser.
 */
import { createHmac } from 'node:crypto';
import type { CaptureOptions } from './types.ts';

export const RENDER_PATH = '/api/render';

/** Capture options that may ride in a link: all but the credentials, which the server refuses there. */
export type RenderLinkOptions = Omit<CaptureOptions, 'headers' | 'cookies' | 'authorization'>;

export interface RenderLinkParams {
  /** The API's origin, e.g. https://viewfinder.example.com (a path prefix is kept, trailing slashes dropped). */
  origin: string;
  /** The key's id (`key_...`), never the key itself. */
  keyId: string;
  /** The key's signing secret (`vfs_...`). */
  signingSecret: string;
  /**
   * The capture options: an object (in its own order; booleans as true/false, lists repeated,
   * objects as dotted names such as pdf.margin.top), or [name, value] pairs in the order to sign.
   */
  options: RenderLinkOptions | ReadonlyArray<readonly [string, string]>;
  /** Unix time in seconds after which the link answers 403. */
  expires?: number;
  /** Seconds from now after which the link answers 403 (instead of `expires`). */
  expiresIn?: number;
}

const CREDENTIALS = new Set(['headers', 'cookies', 'authorization']);

/** The [name, value] pairs of an options object, as the server reads them back from a query. */
export function linkParameters(options: RenderLinkOptions): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const add = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) add(name, item);
    } else if (typeof value === 'object') {
      for (const [field, inner] of Object.entries(value)) add(`${name}.${field}`, inner);
    } else {
      pairs.push([name, String(value)]);
    }
  };
  for (const [name, value] of Object.entries(options)) {
    if (CREDENTIALS.has(name)) throw new TypeError(`${name} cannot ride in a render link: capture pages behind a login with screenshots.create`);
    add(name, value);
  }
  return pairs;
}

export function renderLinkSignature(signedQuery: string, signingSecret: string): string {
  return createHmac('sha256', signingSecret).update(signedQuery, 'utf8').digest('hex');
}

/** A signed render link, for an `<img src>`. */
export function signRenderLink(params: RenderLinkParams): string {
  const pairs = Array.isArray(params.options) ? (params.options as ReadonlyArray<readonly [string, string]>) : linkParameters(params.options as RenderLinkOptions);
  const query = new URLSearchParams(pairs.map(([name, value]): [string, string] => [name, value]));
  query.append('key', params.keyId);
  const expires = params.expires ?? (params.expiresIn !== undefined ? Math.floor(Date.now() / 1000) + params.expiresIn : undefined);
  if (expires !== undefined) query.append('expires', String(expires));
  const signed = query.toString();
  return `${params.origin.replace(/\/+$/, '')}${RENDER_PATH}?${signed}&signature=${renderLinkSignature(signed, params.signingSecret)}`;
}
