import { compileValidator } from '../../validation.ts';
import { operationsFor } from './operations.ts';
import { param, type ApiRoute } from './route.ts';
import { allowedDomainsSchema, nameMessages, nameSchema, siteSchema } from './schemas.ts';

export const updateSiteSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name: nameSchema, allowedDomains: { ...allowedDomainsSchema, description: `Replaces the whole list. ${allowedDomainsSchema.description}` } },
} as const;

export const validate = compileValidator<{ name?: string; allowedDomains?: string[] }>(updateSiteSchema, [
  (e) => (e.keyword === 'minProperties' ? 'Give allowedDomains or name to change' : undefined),
  ...nameMessages,
]);

export const updateSiteRoute: ApiRoute = {
  method: 'PATCH',
  path: '/api/sites/:siteId',
  operationId: 'updateSite',
  summary: "Change a site's allowed domains (or name)",
  description: 'Keys apply the new domains from their next request.',
  tag: 'Sites',
  access: 'full-access',
  body: updateSiteSchema,
  responses: { 200: { description: 'The updated site', schema: siteSchema } },
  errors: { 404: 'No such site in this account', 409: 'The site is managed by a Kubernetes Site resource: edit that instead' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = await operationsFor(store, ctx).updateSite(param(ctx.params, 'siteId'), validate(ctx.request.body));
    },
};
