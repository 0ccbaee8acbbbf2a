import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed render links (docs/render-links.md): `GET /api/render?<options>&key=<key id>&expires=<unix
 * time>&signature=<hex>`. The signature is the HMAC-SHA256, with the key's signing secret, of the
 * exact query string before `&signature=`, so any change to it (a parameter, its spelling or
 * encoding, their order) breaks the link. One module signs (the CLI, the dashboard) and checks
 * (the API), so both read the query the same way.
 */
export const RENDER_PATH = '/api/render';
/** The link's own parameters; every other one is a capture option. */
export const LINK_PARAMETERS = ['key', 'expires', 'signature'] as const;

const SIGNATURE_SUFFIX = /&signature=([0-9a-f]{64})$/;

export function renderLinkSignature(signedQuery: string, signingSecret: string): string {
  return createHmac('sha256', signingSecret).update(signedQuery, 'utf8').digest('hex');
}

/** The query split at its trailing `&signature=`: what was signed, and the signature. Undefined when unsigned. */
export function splitSignedQuery(rawQuery: string): { signed: string; signature: string } | undefined {
  const match = SIGNATURE_SUFFIX.exec(rawQuery);
  if (!match) return undefined;
  return { signed: rawQuery.slice(0, match.index), signature: match[1] as string };
}

/** Constant-time check of a hex signature against the one the secret makes. */
export function signatureMatches(signedQuery: string, signature: string, signingSecret: string): boolean {
  const expected = Buffer.from(renderLinkSignature(signedQuery, signingSecret), 'hex');
  const presented = Buffer.from(signature, 'hex');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

export interface LinkToSign {
  /** The API's origin, e.g. https://viewfinder.example.com. */
  origin: string;
  /** Capture options in the order they go into the query: url first, then the others. */
  options: Array<[name: string, value: string]>;
  keyId: string;
  signingSecret: string;
  /** Unix time in seconds after which the link answers 403; none for a link that never expires. */
  expires?: number | undefined;
}

/** Builds a signed link: the options, key and expires, form-encoded as URLSearchParams does, then the signature. */
export function signRenderLink(link: LinkToSign): string {
  const query = new URLSearchParams(link.options);
  query.append('key', link.keyId);
  if (link.expires !== undefined) query.append('expires', String(link.expires));
  const signed = query.toString();
  return `${link.origin.replace(/\/+$/, '')}${RENDER_PATH}?${signed}&signature=${renderLinkSignature(signed, link.signingSecret)}`;
}
