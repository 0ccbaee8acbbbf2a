import { principalOf } from '../../auth/hosted-key.ts';
import { destinationOperations } from '../../storage/destinations.ts';
import { destinationViewSchema } from '../../storage/schemas.ts';
import { param, type ApiRoute } from './route.ts';

export const getDestinationRoute: ApiRoute = {
  method: 'GET',
  path: '/api/destinations/:name',
  operationId: 'getDestination',
  summary: 'Get a storage destination',
  tag: 'Storage',
  access: 'full-access',
  responses: { 200: { description: 'The destination, without its credentials', schema: destinationViewSchema } },
  errors: { 404: 'No such destination in this account' },
  handler: ({ store, storage }) =>
    async (ctx) => {
      ctx.body = await destinationOperations(store, storage, principalOf(ctx).account.id).get(param(ctx.params, 'name'));
    },
};
