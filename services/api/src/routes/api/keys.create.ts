import { compileValidator } from '../../validation.ts';
import { operationsFor } from './operations.ts';
import type { ApiRoute } from './route.ts';
import { issuedKeySchema, nameMessages, nameSchema } from './schemas.ts';

export const createKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: nameSchema,
    siteId: { type: 'string', minLength: 1, maxLength: 64, description: 'Makes a site key; without it the key has full access.' },
    restrictDomains: { type: 'boolean', description: "Site keys only: capture only the site's allowed domains. Default false." },
    unsignedLinks: {
      type: 'boolean',
      description: 'Site keys only: let GET /api/render take this key itself in the query, without a signature. Default false: render links must be signed.',
    },
  },
} as const;

export const validate = compileValidator<{ name: string; siteId?: string; restrictDomains?: boolean; unsignedLinks?: boolean }>(createKeySchema, nameMessages);

export const createKeyRoute: ApiRoute = {
  method: 'POST',
  path: '/api/keys',
  operationId: 'createKey',
  summary: 'Create an API key; the answer holds the key, once',
  tag: 'API keys',
  access: 'full-access',
  body: createKeySchema,
  responses: { 201: { description: 'The new key, with its secret in `key`', schema: issuedKeySchema } },
  errors: { 404: 'siteId names no site of this account' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.status = 201;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await operationsFor(store, ctx).createKey(validate(ctx.request.body));
    },
};
