import { operationsFor } from './operations.ts';
import type { ApiRoute } from './route.ts';
import { siteSchema } from './schemas.ts';

export const listSitesRoute: ApiRoute = {
  method: 'GET',
  path: '/api/sites',
  operationId: 'listSites',
  summary: "List the account's sites",
  tag: 'Sites',
  access: 'full-access',
  responses: { 200: { description: 'The sites', schema: { type: 'object', required: ['sites'], properties: { sites: { type: 'array', items: siteSchema } } } } },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = { sites: await operationsFor(store, ctx).listSites() };
    },
};
