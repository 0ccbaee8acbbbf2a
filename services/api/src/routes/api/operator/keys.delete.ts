import { managedOperations } from '../../../../../../lib/management.ts';
import type { ApiRoute } from '../route.ts';
import { managedDeletedSchema, ownerOf } from './schemas.ts';

export const deleteManagedKeyRoute: ApiRoute = {
  method: 'DELETE',
  path: '/api/operator/keys/:namespace/:name',
  operationId: 'operatorDeleteKey',
  summary: 'Revoke the key that an ApiKey resource owns',
  description: 'Idempotent: answers 200 with `deleted: null` when there is no such key.',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'Deleted, or nothing to delete', schema: managedDeletedSchema } },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = { deleted: await managedOperations(store).deleteKey(...ownerOf(ctx.params)) };
    },
};
