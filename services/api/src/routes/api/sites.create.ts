import { compileValidator } from '../../validation.ts';
import { operationsFor } from './operations.ts';
import type { ApiRoute } from './route.ts';
import { allowedDomainsSchema, nameMessages, nameSchema, siteSchema } from './schemas.ts';

export const createSiteSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['allowedDomains'],
  properties: {
    name: { ...nameSchema, description: 'Defaults to the first allowed domain' },
    allowedDomains: allowedDomainsSchema,
  },
} as const;

export const validate = compileValidator<{ name?: string; allowedDomains: string[] }>(createSiteSchema, nameMessages);

export const createSiteRoute: ApiRoute = {
  method: 'POST',
  path: '/api/sites',
  operationId: 'createSite',
  summary: 'Create a site',
  tag: 'Sites',
  access: 'full-access',
  body: createSiteSchema,
  responses: { 201: { description: 'The new site', schema: siteSchema } },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.status = 201;
      ctx.body = await operationsFor(store, ctx).createSite(validate(ctx.request.body));
    },
};
