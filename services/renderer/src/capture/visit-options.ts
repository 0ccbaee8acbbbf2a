/**
 * The options that say what the page is and who visits it (docs/capture-options.md): html instead
 * of a URL, credentials (headers, cookies, authorization), a user agent, a locale, a time zone and a
 * position, and what changes the page (injectCss, injectJs, click, blockResources, blockUrls).
 * Their schemas and bounds live here, beside the renderer that acts on them, so that the API's
 * schema and the renderer's own check of its wire are one.
 */
import { BLOCKED_RESOURCES, type CaptureRequest } from '../renderer.ts';

/** UTF-8 bytes of `html`: its data: URL (base64, a third longer) stays under Chromium's 2 MiB URL limit. */
export const MAX_HTML_BYTES = 1_000_000;
export const MAX_INJECT_LENGTH = 100_000;
export const MAX_HEADERS = 50;
export const MAX_HEADER_VALUE_LENGTH = 4096;
export const MAX_COOKIES = 50;
export const MAX_BLOCK_URLS = 50;
export const MAX_USER_AGENT_LENGTH = 512;

/** An HTTP token (RFC 9110), the shape of a header or cookie name. */
const TOKEN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** Printable text and tabs: nothing that could end a header line. */
const FIELD_TEXT = '^[^\\u0000-\\u0008\\u000a-\\u001f\\u007f]*$';
/** A cookie value's characters (RFC 6265 cookie-octet). */
const COOKIE_VALUE = '^[\\u0021\\u0023-\\u002b\\u002d-\\u003a\\u003c-\\u005b\\u005d-\\u007e]*$';

/**
 * Headers the browser owns, or that another option sets: a client sending them would break the
 * request or bypass a rule (Cookie and Authorization have their own, origin-bound options).
 */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'cookie',
  'authorization',
  'user-agent',
  'accept-language',
  'accept-encoding',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'origin',
  'referer',
]);
const FORBIDDEN_PREFIXES = ['proxy-', 'sec-'];

const HEADER_ALTERNATIVES: Record<string, string> = {
  cookie: 'use cookies',
  authorization: 'use authorization',
  'user-agent': 'use userAgent',
  'accept-language': 'use locale',
};

export const visitOptionsProperties = {
  html: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_HTML_BYTES,
    description: `An HTML document to render instead of url (at most ${MAX_HTML_BYTES} bytes of UTF-8, and the request body limit), shown at an opaque origin; everything it loads passes the network guard.`,
  },
  userAgent: { type: 'string', minLength: 1, maxLength: MAX_USER_AGENT_LENGTH, pattern: FIELD_TEXT, description: "Replaces the profile's User-Agent (header and navigator.userAgent)." },
  headers: {
    type: 'object',
    writeOnly: true,
    maxProperties: MAX_HEADERS,
    propertyNames: { pattern: TOKEN, maxLength: 256 },
    additionalProperties: { type: 'string', maxLength: MAX_HEADER_VALUE_LENGTH, pattern: FIELD_TEXT },
    description: "Extra request headers, sent only to the URL's own origin (never to third parties, nor after a redirect to another origin). Write-only: never logged, stored or returned.",
  },
  cookies: {
    type: 'array',
    writeOnly: true,
    maxItems: MAX_COOKIES,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'value'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 256, pattern: TOKEN }, value: { type: 'string', maxLength: MAX_HEADER_VALUE_LENGTH, pattern: COOKIE_VALUE } },
    },
    description: "Cookies of the URL's host (host-only, Secure on https), as the browser would hold them after a login. Write-only.",
  },
  authorization: {
    type: 'object',
    writeOnly: true,
    required: ['type'],
    properties: { type: { type: 'string', enum: ['basic', 'bearer'] } },
    oneOf: [
      {
        additionalProperties: false,
        required: ['type', 'username', 'password'],
        properties: {
          type: { const: 'basic' },
          username: { type: 'string', maxLength: 256, pattern: '^[^:\\u0000-\\u001f\\u007f]*$' },
          password: { type: 'string', maxLength: 256, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
        },
      },
      {
        additionalProperties: false,
        required: ['type', 'token'],
        properties: { type: { const: 'bearer' }, token: { type: 'string', minLength: 1, maxLength: MAX_HEADER_VALUE_LENGTH, pattern: '^[A-Za-z0-9\\-._~+/]+=*$' } },
      },
    ],
    description: "HTTP authentication, sent as an Authorization header only to the URL's own origin. Write-only.",
  },
  injectCss: { type: 'string', minLength: 1, maxLength: MAX_INJECT_LENGTH, description: 'CSS added to the page from its first paint (top document only; @import is ignored).' },
  injectJs: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_INJECT_LENGTH,
    description: 'A script run in the page once it has loaded, as the body of an async function (await works); the capture waits for it, within the capture deadline.',
  },
  click: { type: 'string', minLength: 1, maxLength: 1024, description: 'A CSS selector: its element is clicked once visible, before the wait (408 if it never becomes visible).' },
  blockResources: {
    type: 'array',
    maxItems: BLOCKED_RESOURCES.length,
    uniqueItems: true,
    items: { type: 'string', enum: [...BLOCKED_RESOURCES] },
    description: 'Kinds of subresources never loaded: images, fonts, media (audio, video), scripts.',
  },
  blockUrls: {
    type: 'array',
    maxItems: MAX_BLOCK_URLS,
    items: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[^\\u0000-\\u0020\\u007f]+$' },
    description: 'URL patterns never loaded, matched against the whole URL; * matches any characters (e.g. "*://*.doubleclick.net/*").',
  },
  timezone: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_+\\-/]+$', description: 'An IANA time zone, e.g. Europe/Paris.' },
  locale: {
    type: 'string',
    maxLength: 35,
    pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$',
    description: 'A BCP 47 language tag, e.g. fr-FR: the Accept-Language header, navigator.language and Intl.',
  },
  geolocation: {
    type: 'object',
    additionalProperties: false,
    required: ['latitude', 'longitude'],
    properties: {
      latitude: { type: 'number', minimum: -90, maximum: 90 },
      longitude: { type: 'number', minimum: -180, maximum: 180 },
      accuracy: { type: 'number', minimum: 0, maximum: 100_000, description: 'Metres; 0 by default.' },
    },
    description: "A position the page reads through navigator.geolocation, with the permission granted.",
  },
} as const;

/** The options that carry credentials: they go only to the URL's origin, never in a link, a log or a stored key. */
export const CREDENTIAL_OPTIONS = ['headers', 'cookies', 'authorization'] as const satisfies readonly (keyof CaptureRequest)[];

export function hasCredentials(request: Pick<CaptureRequest, (typeof CREDENTIAL_OPTIONS)[number]>): boolean {
  return CREDENTIAL_OPTIONS.some((name) => request[name] !== undefined);
}

/** The checks a schema cannot make; the API runs them on a valid body, the renderer on its wire. */
export function visitOptionsProblems(request: Pick<CaptureRequest, 'html' | 'headers' | 'timezone'>): string[] {
  const problems: string[] = [];
  if (request.html !== undefined && Buffer.byteLength(request.html, 'utf8') > MAX_HTML_BYTES) problems.push(`html must be at most ${MAX_HTML_BYTES} bytes of UTF-8`);
  for (const name of Object.keys(request.headers ?? {})) {
    const lower = name.toLowerCase();
    if (FORBIDDEN_HEADERS.has(lower) || FORBIDDEN_PREFIXES.some((prefix) => lower.startsWith(prefix))) {
      const alternative = HEADER_ALTERNATIVES[lower];
      problems.push(`headers cannot set ${JSON.stringify(name)}${alternative ? `: ${alternative}` : ': the browser sets it'}`);
    }
  }
  if (request.timezone !== undefined && !isTimeZone(request.timezone)) problems.push(`timezone ${JSON.stringify(request.timezone)} is not an IANA time zone (e.g. Europe/Paris)`);
  return problems;
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
