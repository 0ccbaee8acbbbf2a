import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { looksLikeApiKey } from '../../../../../lib/api-keys.ts';
import { BadRequest, Forbidden, Unauthorized } from '../../../../../lib/errors.ts';
import { LINK_PARAMETERS, RENDER_PATH, signatureMatches, splitSignedQuery } from '../../../../../lib/render-links.ts';
import type { Store } from '../../../../../lib/store/store.ts';
import { CREDENTIAL_OPTIONS, hasCredentials } from '../../../../renderer/src/capture/visit-options.ts';
import { CAPTURE_FORMATS, DEFAULT_IMAGE_FORMAT, MIME_TYPES } from '../../../../renderer/src/capture/image-formats.ts';
import { authenticate, touchKey, type Principal } from '../../auth/hosted-key.ts';
import { recordAuthFailure } from '../../metrics.ts';
import { sendScreenshot } from '../screenshot-answer.ts';
import { reportRefusal } from '../capture-options.ts';
import { captureForKey } from './hosted-capture.ts';
import type { ApiRoute, JsonSchema } from './route.ts';
import { hostedScreenshotBodySchema, validateBody } from './screenshot.post.ts';

/**
 * GET /api/render: a capture as a plain URL for `<img src>` (docs/render-links.md). The link is
 * checked before anything else: a signed link (key id, optional expires, signature over the exact
 * query before `&signature=`), or, only for a site key whose owner allowed it, the key itself in
 * the query. Then every rule of POST /api/screenshot holds (site, domains, rate limit, usage,
 * result cache), with the options of its body as query parameters. The answer is the image, with
 * an ETag and a public Cache-Control from cacheTtl; errors stay JSON with a 4xx/5xx status, so an
 * `<img>` shows a broken image.
 */

/**
 * A link is read by every browser, proxy, log and Referer it passes through, and its signature only
 * proves who made it: credentials cannot ride in one, whatever signs it.
 */
export const CREDENTIALS_IN_LINK =
  'headers, cookies and authorization cannot ride in a render link: a link is seen by every browser, proxy and log it passes through; capture pages behind a login with POST /api/screenshot';

/** A journey types into pages (a password, with credentials): what it holds is no more fit for a link than a header is. */
export const STEPS_IN_LINK =
  'steps and credentials cannot ride in a render link: a link is seen by every browser, proxy and log it passes through, and a journey holds what it types; run journeys with POST /api/screenshot';
const JOURNEY_OPTIONS = ['steps', 'credentials'];
/** A link answers the image itself, to whoever loads it; delivery to a bucket is a POST's. */
export const STORAGE_IN_LINK =
  'storage cannot be asked of a render link: a link answers the image itself; write captures to a storage destination with POST /api/screenshot or POST /api/captures';

const KEY_ID = /^key_[0-9a-f]{24}$/;
/** 12 digits: any Unix time in seconds until the year 33658; more would be a mistake, not a date. */
const UNIX_TIME = /^\d{1,12}$/;
const NUMBER = /^-?\d+(\.\d+)?$/;
const FIELD = /^[A-Za-z_]\w{0,63}$/;
const UNSAFE_FIELDS = new Set(['__proto__', 'constructor', 'prototype']);

interface PropertySchema {
  type?: string;
  properties?: Record<string, PropertySchema>;
}
const OPTIONS_SCHEMA = hostedScreenshotBodySchema as PropertySchema;

/**
 * The capture options from the query, typed by the POST body's schema: booleans are `true` or
 * `false`, numbers are decimal, a list repeats its parameter (hideSelectors=a&hideSelectors=b),
 * and a field of an object is named with dots (pdf.paper=A4, pdf.margin.top=1cm). Anything else
 * stays a string, so validation answers with the same 400 as the POST body would, unknown
 * fields included.
 */
export function optionsFromQuery(query: URLSearchParams): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of new Set(query.keys())) {
    if ((LINK_PARAMETERS as readonly string[]).includes(name)) continue;
    // By name, before the value's shape could make another 400 of it (headers=..., cookies.name=...).
    if ((CREDENTIAL_OPTIONS as readonly string[]).includes(name.split('.')[0]!)) throw new BadRequest(CREDENTIALS_IN_LINK);
    if (JOURNEY_OPTIONS.includes(name.split('.')[0]!)) throw new BadRequest(STEPS_IN_LINK);
    if (name.split('.')[0] === 'storage') throw new BadRequest(STORAGE_IN_LINK);
    const values = query.getAll(name);
    const path = name.split('.');
    // A name is a field path of the schema's shape; __proto__ and the like never reach an object.
    if (!path.every((part) => FIELD.test(part) && !UNSAFE_FIELDS.has(part))) throw new BadRequest(`Unknown field: "${name}"`);
    // The object that holds the field, and the field's schema; both made or found along the dotted path.
    let holder = body;
    let schema: PropertySchema | undefined = OPTIONS_SCHEMA;
    for (const [depth, part] of path.entries()) {
      schema = schema?.properties?.[part];
      if (depth === path.length - 1) break;
      const next = Object.hasOwn(holder, part) ? holder[part] : (holder[part] = {});
      if (typeof next !== 'object' || next === null || Array.isArray(next)) throw new BadRequest(`${name} cannot be given beside ${path.slice(0, depth + 1).join('.')}`);
      holder = next as Record<string, unknown>;
    }
    const field = path.at(-1) as string;
    if (Object.hasOwn(holder, field)) throw new BadRequest(`${name} cannot be given beside the fields under it`);
    holder[field] = typed(name, values, schema?.type);
  }
  return body;
}

function typed(name: string, values: string[], type: string | undefined): unknown {
  if (type === 'array') return values;
  if (values.length > 1) throw new BadRequest(`${name} is given ${values.length} times: give it once`);
  const value = values[0] as string;
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if ((type === 'integer' || type === 'number') && NUMBER.test(value)) return Number(value);
  return value;
}

function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new BadRequest(`${name} is given ${values.length} times: give it once`);
  return values[0];
}

interface CheckedLink {
  principal: Principal;
  /** Unix seconds, for a signed link that expires. */
  expires: number | undefined;
  options: Record<string, unknown>;
}

/** Who a link is from, or the 400/401/403 that refuses it. Nothing of the query is trusted before this. */
async function checkLink(store: Store, rawQuery: string): Promise<CheckedLink> {
  const split = splitSignedQuery(rawQuery);
  const query = new URLSearchParams(split ? split.signed : rawQuery);
  const key = single(query, 'key');
  if (query.has('signature')) {
    recordAuthFailure('invalid_signature');
    throw new Unauthorized('Invalid render link: signature must be the last parameter, 64 lowercase hex digits');
  }
  if (key === undefined) {
    recordAuthFailure('missing_key');
    throw new Unauthorized('Invalid render link: key (the key id) is missing');
  }

  if (looksLikeApiKey(key)) {
    // An unsigned link: the key itself is in the URL, which only a site key may allow.
    if (split || query.has('expires')) throw new BadRequest('expires and signature go with a key id (key_...), never with the key itself');
    const principal = await authenticate(store, key);
    if (!principal) {
      recordAuthFailure('invalid_key');
      throw new Unauthorized();
    }
    if (principal.key.kind !== 'site' || !principal.key.unsignedLinks) {
      recordAuthFailure('unsigned_link');
      throw new Forbidden('This API key does not allow unsigned render links: sign the link with the key id and its signing secret');
    }
    return { principal, expires: undefined, options: optionsFromQuery(query) };
  }

  if (!split) {
    recordAuthFailure('invalid_signature');
    throw new Unauthorized('Invalid render link: it is not signed (end it with &signature=<HMAC-SHA256 of the query before it>)');
  }
  const secret = KEY_ID.test(key) ? await store.getSigningSecret(key) : null;
  // Compare even without a secret, so that an unknown key id takes as long as a wrong signature.
  const valid = signatureMatches(split.signed, split.signature, secret ?? 'no signing secret') && secret !== null;
  const stored = valid ? await store.getKey(key) : null;
  const account = stored ? await store.getAccount(stored.accountId) : null;
  if (!stored || !account) {
    recordAuthFailure('invalid_signature');
    throw new Unauthorized('Invalid render link signature');
  }
  const expiresText = single(query, 'expires');
  let expires: number | undefined;
  if (expiresText !== undefined) {
    if (!UNIX_TIME.test(expiresText)) throw new BadRequest('expires must be a Unix time in seconds');
    expires = Number(expiresText);
    if (expires * 1000 <= Date.now()) {
      recordAuthFailure('link_expired');
      throw new Forbidden(`This render link expired at ${new Date(expires * 1000).toISOString()}`);
    }
  }
  return { principal: { key: stored, account }, expires, options: optionsFromQuery(query) };
}

/** Public when the capture may be kept (cacheTtl), never past the link's own expiry; else revalidate each time. */
function cacheControl(cacheTtl: number | undefined, expires: number | undefined): string {
  const untilExpiry = expires === undefined ? Infinity : expires - Math.floor(Date.now() / 1000);
  const maxAge = Math.min(cacheTtl ?? 0, untilExpiry);
  return maxAge > 0 ? `public, max-age=${maxAge}` : 'public, no-cache';
}

/**
 * If-None-Match names this ETag (weak comparison, RFC 9110 13.1.2), or is `*`. Koa's ctx.fresh is
 * not used: it answers 200 to any request with Cache-Control: no-cache, which fetch() adds to
 * every conditional request it is given.
 */
function notModified(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

function etagOf(image: Buffer): string {
  return `"${createHash('sha256').update(image).digest('base64url')}"`;
}

const linkParameters: JsonSchema[] = [
  { name: 'url', in: 'query', required: true, schema: { type: 'string' }, description: 'The page to capture (http or https).' },
  {
    name: 'key',
    in: 'query',
    required: true,
    schema: { type: 'string' },
    description: 'The key id (key_...) of a signed link; or, for a site key created with unsignedLinks, the key itself (then without expires and signature).',
  },
  { name: 'expires', in: 'query', required: false, schema: { type: 'integer' }, description: 'Signed links: Unix time in seconds after which the link answers 403.' },
  {
    name: 'signature',
    in: 'query',
    required: false,
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    description: 'Last parameter: hex HMAC-SHA256, with the key\'s signing secret, of the exact query string before "&signature=".',
  },
  {
    name: 'options',
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    schema: { type: 'object', additionalProperties: true },
    description:
      'Every other field of the POST /api/screenshot body, as a parameter of its own: booleans as true or false, hideSelectors repeated. Unknown parameters answer 400.',
  },
];

export const renderRoute: ApiRoute = {
  method: 'GET',
  path: RENDER_PATH,
  operationId: 'renderLink',
  summary: 'A screenshot as a plain URL, for <img src>: a signed render link',
  description:
    'The same capture as POST /api/screenshot, with its fields as query parameters, answered with the image itself. The link carries a key id, an optional ' +
    'expiry and a signature instead of the key (docs/render-links.md). Checks, in order: the link (401 unsigned, wrong key id or signature; 403 expired, or an ' +
    'unsigned link the key does not allow), the options (400), the site, the domain, the rate limit, then captures. Errors are JSON with a 4xx/5xx status, so ' +
    'an <img> shows a broken image.',
  tag: 'Screenshots',
  // The link authenticates itself: no X-API-Key.
  access: 'public',
  parameters: linkParameters,
  responses: {
    200: {
      description: 'The image bytes. Cache-Control is public with max-age from cacheTtl (never past expires), or no-cache without one.',
      alternatives: Object.fromEntries(CAPTURE_FORMATS.map((format) => [MIME_TYPES[format], { type: 'string', contentMediaType: MIME_TYPES[format] }])),
      headers: {
        ETag: { description: 'A strong validator of the image bytes; send it back in If-None-Match', schema: { type: 'string' } },
        'Cache-Control': { description: 'public, max-age=<cacheTtl> (at most until expires); public, no-cache without a cacheTtl', schema: { type: 'string' } },
        'Viewfinder-Cache': { description: 'hit or miss; only with a cacheTtl above 0', schema: { type: 'string', enum: ['hit', 'miss'] } },
      },
    },
    304: { description: 'If-None-Match names the ETag of this very image' },
  },
  errors: {
    400: 'A parameter is invalid or unknown (report and storage among them: a link answers the image alone; headers, cookies, authorization, steps and credentials cannot ride in a link); the error names every problem',
    401: 'The link is unsigned, its signature does not match, or its key is unknown or regenerated',
    403: 'The link expired; or the key does not allow unsigned links; or the URL\'s host is not among the site\'s allowed domains',
    404: 'site_id names no site of the key\'s account',
    408: 'The page took too long to load, or no element matching waitForSelector became visible in time',
    429: 'Rate limit exceeded; see Retry-After',
    500: 'Screenshot generation failed',
  },
  handler: (deps) => async (ctx: Context) => {
    const started = performance.now();
    const { principal, expires, options } = await checkLink(deps.store, ctx.querystring);
    await touchKey(deps.store, principal.key);
    // Before validation, which would only say that the query's text is no report option.
    if (Object.hasOwn(options, 'report')) throw new BadRequest(reportRefusal('a render link, which answers the image itself'));
    const { site_id: siteId, ...body } = validateBody(options);
    if (hasCredentials(body)) throw new BadRequest(CREDENTIALS_IN_LINK);
    if (body.steps !== undefined || body.credentials !== undefined) throw new BadRequest(STEPS_IN_LINK);
    // A link answers its format's bytes whatever the Accept header says: an <img> accepts anything.
    const chooseFormat = () => ({ body, raw: body.format ?? DEFAULT_IMAGE_FORMAT });
    const { answer, raw, recordCapture } = await captureForKey(deps, ctx, principal, { given: body, siteId, chooseFormat, started });
    sendScreenshot(ctx, answer, raw);
    const etag = etagOf(answer.image);
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', cacheControl(body.cacheTtl, expires));
    ctx.status = 200;
    if (notModified(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      ctx.body = null;
    }
    await recordCapture(ctx.status === 304 ? 0 : answer.body.fileSize);
  },
};
