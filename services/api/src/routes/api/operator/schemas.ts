import type { JsonSchema } from '../route.ts';
import { allowedDomainsSchema, keySchema, nameSchema, siteSchema } from '../schemas.ts';

/** The operator routes' shapes (lib/operator-api.ts): the management API's views plus the owning account. */

const accountId = { type: 'string', minLength: 1, maxLength: 64, description: 'The account (acct_...) the object belongs to.' } as const;
const uid = { type: 'string', minLength: 1, maxLength: 128, description: "The owning resource's metadata.uid." } as const;

function withAccount(schema: JsonSchema): JsonSchema {
  return {
    ...schema,
    required: [...(schema.required as string[]), 'accountId'],
    properties: { ...(schema.properties as JsonSchema), accountId: { type: 'string' } },
  };
}

export const managedSiteSchema = withAccount(siteSchema);
export const managedKeySchema = withAccount(keySchema);

export const putManagedKeyAnswerSchema: JsonSchema = {
  ...managedKeySchema,
  required: [...(managedKeySchema.required as string[]), 'key'],
  properties: {
    ...(managedKeySchema.properties as JsonSchema),
    key: { type: ['string', 'null'], description: 'The plaintext key when this call created it (shown once), else null.' },
  },
};

export const issuedManagedKeySchema: JsonSchema = {
  ...managedKeySchema,
  required: [...(managedKeySchema.required as string[]), 'key'],
  properties: { ...(managedKeySchema.properties as JsonSchema), key: { type: 'string', description: 'The new plaintext key, shown once.' } },
};

export const putManagedSiteSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'uid', 'name', 'allowedDomains'],
  properties: { accountId, uid, name: nameSchema, allowedDomains: allowedDomainsSchema },
} as const;

export const putManagedKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'uid', 'name', 'siteId', 'restrictDomains'],
  properties: {
    accountId,
    uid,
    name: nameSchema,
    siteId: { type: ['string', 'null'], minLength: 1, maxLength: 64, description: 'A site id for a site key; null for a full-access key.' },
    restrictDomains: { type: 'boolean', description: "Site keys only: capture only the site's allowed domains." },
  },
} as const;

export const verifyKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['keyHash'],
  properties: { keyHash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The SHA-256 (hex) of the plaintext key the caller holds; never the key itself.' } },
} as const;

export const managedDeletedSchema: JsonSchema = {
  type: 'object',
  required: ['deleted'],
  properties: { deleted: { type: ['string', 'null'], description: 'The id of the deleted object, or null when there was none (deleting is idempotent).' } },
};

/** The two path parameters of every managed object: the owning resource's namespace and name. */
export function ownerOf(params: Record<string, string>): [string, string] {
  return [params.namespace ?? '', params.name ?? ''];
}
