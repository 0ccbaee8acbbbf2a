import { managedOperations } from '../../../../../../lib/management.ts';
import type { ApiRoute } from '../route.ts';
import { managedDeletedSchema, ownerOf } from './schemas.ts';

export const deleteManagedSiteRoute: ApiRoute = {
  method: 'DELETE',
  path: '/api/operator/sites/:namespace/:name',
  operationId: 'operatorDeleteSite',
  summary: 'Delete the site that a Site resource owns, with the keys scoped to it',
  description: 'Idempotent: answers 200 with `deleted: null` when there is no such site.',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'Deleted, or nothing to delete', schema: managedDeletedSchema } },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = { deleted: await managedOperations(store).deleteSite(...ownerOf(ctx.params)) };
    },
};
