import { managedOperations } from '../../../../../../lib/management.ts';
import type { ApiRoute } from '../route.ts';
import { managedSiteSchema, ownerOf } from './schemas.ts';

export const getManagedSiteRoute: ApiRoute = {
  method: 'GET',
  path: '/api/operator/sites/:namespace/:name',
  operationId: 'operatorGetSite',
  summary: 'Get the site that a Site resource owns',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'The site', schema: managedSiteSchema } },
  errors: { 404: 'No site is managed by that Site' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = await managedOperations(store).getSite(...ownerOf(ctx.params));
    },
};
