import { principalOf } from '../../auth/hosted-key.ts';
import { destinationOperations } from '../../storage/destinations.ts';
import { param, type ApiRoute } from './route.ts';

export const deleteDestinationRoute: ApiRoute = {
  method: 'DELETE',
  path: '/api/destinations/:name',
  operationId: 'deleteDestination',
  summary: 'Delete a storage destination',
  description: 'Objects already written stay in the bucket. Asynchronous captures still waiting for it fail with the reason.',
  tag: 'Storage',
  access: 'full-access',
  responses: { 200: { description: 'Deleted', schema: { type: 'object', required: ['deleted'], properties: { deleted: { type: 'string', description: 'The name of the deleted destination' } } } } },
  errors: { 404: 'No such destination in this account' },
  handler: ({ store, storage }) =>
    async (ctx) => {
      const name = param(ctx.params, 'name');
      await destinationOperations(store, storage, principalOf(ctx).account.id).delete(name);
      ctx.body = { deleted: name };
    },
};
