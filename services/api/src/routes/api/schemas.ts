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
  required: ['id', 'name', 'kind', 'siteId', 'restrictDomains', 'prefix', 'managedBy', 'createdAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string', examples: ['key_8b1d2c3e4f5a6b7c8d9e0f1a'] },
    name: { type: 'string' },
    kind: { type: 'string', enum: ['full', 'site'] },
    siteId: { type: ['string', 'null'] },
    restrictDomains: { type: 'boolean' },
    prefix: { type: 'string', description: 'The first characters of the key, to tell keys apart.', examples: ['vf_Q2x8aZ3k'] },
    managedBy: managedBySchema,
    createdAt: timestamp,
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

export const issuedKeySchema: JsonSchema = {
  ...keySchema,
  required: [...(keySchema.required as string[]), 'key'],
  properties: {
    ...(keySchema.properties as JsonSchema),
    key: { type: 'string', description: 'The API key itself. It is shown this once and cannot be retrieved again.' },
  },
};

const counts: JsonSchema = {
  type: 'object',
  required: ['captures', 'failures', 'bytes'],
  properties: { captures: { type: 'integer' }, failures: { type: 'integer' }, bytes: { type: 'integer', description: 'Image bytes returned (PNG, JPEG or WebP)' } },
};

export const usageSchema: JsonSchema = {
  type: 'object',
  required: ['sites', 'keys'],
  properties: {
    sites: { type: 'object', additionalProperties: counts, description: 'By site id' },
    keys: { type: 'object', additionalProperties: counts, description: 'By key id' },
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

/** A name for a site or key: what people see in lists. */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 100 } as const;

export const allowedDomainsSchema = {
  type: 'array',
  maxItems: 100,
  items: { type: 'string', minLength: 1, maxLength: 260 },
  description: 'Host names (example.com); subdomains are included. A leading "*." is accepted and dropped; schemes, paths, ports and other wildcards are rejected.',
} as const;
