import type { ErrorObject } from 'ajv';
import type { MessageRule } from '../../validation.ts';
import type { JsonSchema } from './route.ts';

/** Response schemas of the management API, for the OpenAPI document. Request schemas sit beside their routes. */

export const managedBySchema: JsonSchema = {
  type: ['object', 'null'],
  description: 'The Kubernetes resource that owns this object; change it there (the API answers 409).',
  required: ['kind', 'namespace', 'name', 'uid'],
  properties: {
    kind: { type: 'string', enum: ['Site', 'ApiKey', 'PageMonitor'] },
    namespace: { type: 'string' },
    name: { type: 'string' },
    uid: { type: 'string' },
  },
};

const timestamp = { type: 'string', format: 'date-time' };

export const siteSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'allowedDomains', 'managedBy', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', examples: ['site_3f9c0a6be21d4478a1c2d3e4'] },
    name: { type: 'string' },
    allowedDomains: { type: 'array', items: { type: 'string' }, description: 'Normalized host names; subdomains are included.' },
    managedBy: managedBySchema,
    createdAt: timestamp,
    updatedAt: timestamp,
  },
};

export const keySchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'kind', 'siteId', 'restrictDomains', 'unsignedLinks', 'prefix', 'managedBy', 'createdAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string', examples: ['key_8b1d2c3e4f5a6b7c8d9e0f1a'] },
    name: { type: 'string' },
    kind: { type: 'string', enum: ['full', 'site'] },
    siteId: { type: ['string', 'null'] },
    restrictDomains: { type: 'boolean' },
    unsignedLinks: { type: 'boolean', description: 'Site keys only: GET /api/render also accepts this key itself in the query, unsigned.' },
    prefix: { type: 'string', description: 'The first characters of the key, to tell keys apart.', examples: ['vf_Q2x8aZ3k'] },
    managedBy: managedBySchema,
    createdAt: timestamp,
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

export const issuedKeySchema: JsonSchema = {
  ...keySchema,
  required: [...(keySchema.required as string[]), 'key', 'signingSecret'],
  properties: {
    ...(keySchema.properties as JsonSchema),
    key: { type: 'string', description: 'The API key itself. It is shown this once and cannot be retrieved again.' },
    signingSecret: {
      type: 'string',
      description: 'The secret that signs render links (HMAC-SHA256). Shown this once, like the key; regenerating the key replaces both.',
      examples: ['vfs_4mB2x9QpZr7Yc1Vd8Ke3Hn6Wj0Ls5Ta2Uf9Gi4Ox7Mq'],
    },
  },
};

const counts: JsonSchema = {
  type: 'object',
  required: ['captures', 'failures', 'bytes'],
  properties: { captures: { type: 'integer' }, failures: { type: 'integer' }, bytes: { type: 'integer', description: 'Image bytes returned (PNG, JPEG or WebP)' } },
};

export const usageSchema: JsonSchema = {
  type: 'object',
  required: ['sites', 'keys', 'monitors'],
  properties: {
    sites: { type: 'object', additionalProperties: counts, description: 'By site id' },
    keys: { type: 'object', additionalProperties: counts, description: 'By key id' },
    monitors: { type: 'object', additionalProperties: counts, description: "By monitor id: page monitors' captures, which use no key (they count for the monitor's site too, when it has one)" },
  },
};

export const deletedSchema: JsonSchema = {
  type: 'object',
  required: ['deleted'],
  properties: { deleted: { type: 'string', description: 'The id of the deleted object' } },
};

export const errorSchema: JsonSchema = {
  type: 'object',
  required: ['success', 'error'],
  properties: { success: { const: false }, error: { type: 'string' } },
};

export const unauthorizedSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: { error: { type: 'string', examples: ['Invalid API key'] } },
};

/** A name for a site or key: what people see in lists. One line of text: no control characters. */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$' } as const;

/** The 400 text for a name with a control character (NUL, a line break...), from the pattern above. */
export const nameMessages: MessageRule[] = [
  (e: ErrorObject) => (e.instancePath === '/name' && e.keyword === 'pattern' ? 'name must not contain control characters (such as NUL or a line break)' : undefined),
];

export const allowedDomainsSchema = {
  type: 'array',
  maxItems: 100,
  items: { type: 'string', minLength: 1, maxLength: 260 },
  description: 'Host names (example.com); subdomains are included. A leading "*." is accepted and dropped; schemes, paths, ports and other wildcards are rejected.',
} as const;
