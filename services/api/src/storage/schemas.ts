/**
 * The schemas of storage destinations (the management API's body and answer) and of a capture's
 * `storage` option, with their 400 texts. Credentials are write-only: in a body, never in an answer.
 */
import type { ErrorObject } from 'ajv';
import { MAX_PRESIGN_SECONDS } from '../../../../lib/blobs/sigv4.ts';
import { managedBySchema } from '../routes/api/schemas.ts';
import type { MessageRule } from '../validation.ts';
import { DEFAULT_KEY_TEMPLATE, KEY_PLACEHOLDERS, keyTemplateProblem, MAX_KEY_TEMPLATE_LENGTH } from './key-template.ts';

const DESTINATION_NAME = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';
const PLACEHOLDERS = KEY_PLACEHOLDERS.map((name) => `{${name}}`).join(', ');

export const destinationNameSchema = { type: 'string', pattern: DESTINATION_NAME, description: 'Lower-case letters, digits and hyphens, 1 to 63 characters; unique in the account.' } as const;

const keyTemplateSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_KEY_TEMPLATE_LENGTH,
  description: `The object key, with ${PLACEHOLDERS} filled in per capture (its id, its UTC day YYYY-MM-DD, its format), e.g. shots/{date}/{id}.{format}.`,
} as const;

export const storageOptionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['destination'],
  description: 'Write the capture to a registered storage destination and answer where it is (storage) instead of the image (docs/storage.md).',
  properties: {
    destination: { ...destinationNameSchema, description: 'The name of one of the account\'s storage destinations (POST /api/destinations).' },
    key: { ...keyTemplateSchema, description: `This capture's key template instead of the destination's; ${PLACEHOLDERS} are filled in.` },
    presign: { type: 'integer', minimum: 1, maximum: MAX_PRESIGN_SECONDS, description: `Also answer a presigned GET URL valid for this many seconds (at most ${MAX_PRESIGN_SECONDS}, 7 days).` },
  },
} as const;

export const storageOptionMessages: MessageRule[] = [
  (e: ErrorObject) => (e.instancePath === '/storage' && e.keyword === 'type' ? 'storage must be an object: {"destination": "<name>", "key"?: "<template>", "presign"?: <seconds>}' : undefined),
  (e: ErrorObject) => (e.instancePath === '/storage' && e.keyword === 'required' ? 'storage.destination is required: the name of a registered storage destination' : undefined),
  (e: ErrorObject) =>
    e.instancePath === '/storage' && e.keyword === 'additionalProperties'
      ? `Unknown field: "storage.${String(e.params.additionalProperty)}" (credentials are never given with a capture: register a destination once with POST /api/destinations)`
      : undefined,
  (e: ErrorObject) => (e.instancePath === '/storage/destination' ? 'storage.destination must be a destination name: lower-case letters, digits and hyphens, 1 to 63 characters' : undefined),
  (e: ErrorObject) => (e.instancePath === '/storage/key' ? `storage.key must be a key template of 1 to ${MAX_KEY_TEMPLATE_LENGTH} characters` : undefined),
  (e: ErrorObject) => (e.instancePath === '/storage/presign' ? `storage.presign must be an integer number of seconds from 1 to ${MAX_PRESIGN_SECONDS} (7 days)` : undefined),
];

/** The check a schema cannot make: the override template makes a safe key. */
export function storageOptionProblems(body: { storage?: { key?: string } }): string[] {
  const problem = body.storage?.key === undefined ? undefined : keyTemplateProblem(body.storage.key, 'storage.key');
  return problem ? [problem] : [];
}

const credentialsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['accessKeyId', 'secretAccessKey'],
  description: 'Write-only: stored sealed, used to sign uploads and presigned URLs, never shown again.',
  properties: {
    accessKeyId: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
    secretAccessKey: { type: 'string', pattern: '^[\\x21-\\x7e]{1,256}$' },
  },
} as const;

const fieldSchemas = {
  endpoint: {
    type: 'string',
    format: 'http-url',
    maxLength: 2048,
    description:
      'Where the S3 API answers, e.g. https://s3.eu-west-1.amazonaws.com. It must pass the network guard (no loopback, private, link-local or metadata address unless STORAGE_ENDPOINT_ALLOWLIST allows it), now and at each upload.',
  },
  bucket: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$', description: 'An S3 bucket name.' },
  region: { type: 'string', pattern: '^[a-z0-9-]{1,32}$', description: 'The region the requests are signed for; default us-east-1.' },
  pathStyle: { type: 'boolean', description: 'true: endpoint/bucket/key (most self-hosted servers); false (default): bucket.endpoint/key (AWS).' },
  keyTemplate: { ...keyTemplateSchema, description: `${keyTemplateSchema.description} Default ${DEFAULT_KEY_TEMPLATE}.` },
  credentials: credentialsSchema,
} as const;

export const createDestinationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'endpoint', 'bucket', 'credentials'],
  properties: { name: destinationNameSchema, ...fieldSchemas },
} as const;

export const updateDestinationSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...fieldSchemas, credentials: { ...credentialsSchema, description: `Replaces both. ${credentialsSchema.description}` } },
} as const;

/** Texts for the destination bodies: they name the field and its rule, never a value (which may be a secret). */
export const destinationMessages: MessageRule[] = [
  (e: ErrorObject) => (e.keyword === 'minProperties' ? 'Give at least one field to change' : undefined),
  (e: ErrorObject) => (e.instancePath === '/name' ? 'name must be lower-case letters, digits and hyphens, 1 to 63 characters, not starting or ending with a hyphen' : undefined),
  (e: ErrorObject) => (e.instancePath === '/endpoint' ? 'endpoint must be an http or https URL of at most 2048 characters' : undefined),
  (e: ErrorObject) => (e.instancePath === '/bucket' ? 'bucket must be an S3 bucket name: 3 to 63 lower-case letters, digits, dots and hyphens' : undefined),
  (e: ErrorObject) => (e.instancePath === '/region' ? 'region must be 1 to 32 lower-case letters, digits and hyphens, e.g. eu-west-1' : undefined),
  (e: ErrorObject) => (e.instancePath === '/pathStyle' ? 'pathStyle must be a boolean' : undefined),
  (e: ErrorObject) => (e.instancePath === '/keyTemplate' ? `keyTemplate must be 1 to ${MAX_KEY_TEMPLATE_LENGTH} characters` : undefined),
  (e: ErrorObject) =>
    e.instancePath.startsWith('/credentials') || (e.instancePath === '' && e.keyword === 'required' && e.params.missingProperty === 'credentials')
      ? 'credentials must be {"accessKeyId": ..., "secretAccessKey": ...}, printable ASCII without spaces'
      : undefined,
];

/** What a schema cannot say about a destination's fields. */
export function destinationProblems(body: { endpoint?: string; keyTemplate?: string }): string[] {
  const problems: string[] = [];
  if (body.endpoint !== undefined) {
    const url = URL.parse(body.endpoint);
    if (url && (url.username || url.password)) problems.push('endpoint must not carry credentials: give them in credentials');
    if (url && (url.search || url.hash)) problems.push('endpoint must have no query or fragment');
  }
  const template = body.keyTemplate === undefined ? undefined : keyTemplateProblem(body.keyTemplate, 'keyTemplate');
  if (template) problems.push(template);
  return problems;
}

const timestamp = { type: 'string', format: 'date-time' };

export const destinationViewSchema = {
  type: 'object',
  required: ['name', 'endpoint', 'bucket', 'region', 'pathStyle', 'keyTemplate', 'hasCredentials', 'managedBy', 'createdAt', 'updatedAt'],
  properties: {
    name: { type: 'string' },
    endpoint: { type: 'string' },
    bucket: { type: 'string' },
    region: { type: 'string' },
    pathStyle: { type: 'boolean' },
    keyTemplate: { type: 'string' },
    hasCredentials: { const: true, description: 'The credentials are stored (sealed); they are never answered.' },
    managedBy: {
      ...managedBySchema,
      description: "The Kubernetes Site whose spec.storage this destination is (the operator keeps it): change it there; PATCH and DELETE answer 409. Null for the others.",
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

export const storedObjectSchema = {
  type: 'object',
  required: ['destination', 'bucket', 'key', 'url'],
  description: 'Only with the storage option: where the capture was written (the answer then has no image).',
  properties: {
    destination: { type: 'string' },
    bucket: { type: 'string' },
    key: { type: 'string' },
    url: { type: 'string', description: 'The object\'s URL, unsigned: readable only as the bucket\'s own policy allows.' },
    etag: { type: 'string' },
    presignedUrl: { type: 'string', description: 'Only with storage.presign: a GET URL signed with the destination\'s keys (it carries the access key id, never the secret).' },
    presignedUrlExpiresAt: { type: 'string', format: 'date-time' },
  },
} as const;
