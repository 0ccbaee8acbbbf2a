import { operationsFor } from './operations.ts';
import { param, type ApiRoute } from './route.ts';
import { siteSchema } from './schemas.ts';

export const getSiteRoute: ApiRoute = {
  method: 'GET',
  path: '/api/sites/:siteId',
  operationId: 'getSite',
  summary: 'Get a site',
  tag: 'Sites',
  access: 'full-access',
  responses: { 200: { description: 'The site', schema: siteSchema } },
  errors: { 404: 'No such site in this account' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = await operationsFor(store, ctx).getSite(param(ctx.params, 'siteId'));
    },
};
