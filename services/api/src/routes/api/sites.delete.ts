import { operationsFor } from './operations.ts';
import { param, type ApiRoute } from './route.ts';
import { deletedSchema } from './schemas.ts';

export const deleteSiteRoute: ApiRoute = {
  method: 'DELETE',
  path: '/api/sites/:siteId',
  operationId: 'deleteSite',
  summary: 'Delete a site and the keys scoped to it',
  tag: 'Sites',
  access: 'full-access',
  responses: { 200: { description: 'Deleted', schema: deletedSchema } },
  errors: { 404: 'No such site in this account', 409: 'The site is managed by a Kubernetes Site resource: delete that instead' },
  handler: ({ store }) =>
    async (ctx) => {
      const siteId = param(ctx.params, 'siteId');
      await operationsFor(store, ctx).deleteSite(siteId);
      ctx.body = { deleted: siteId };
    },
};
