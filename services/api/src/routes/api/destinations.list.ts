import { principalOf } from '../../auth/hosted-key.ts';
import { destinationOperations } from '../../storage/destinations.ts';
import { destinationViewSchema } from '../../storage/schemas.ts';
import type { ApiRoute } from './route.ts';

export const listDestinationsRoute: ApiRoute = {
  method: 'GET',
  path: '/api/destinations',
  operationId: 'listDestinations',
  summary: "List the account's storage destinations",
  tag: 'Storage',
  access: 'full-access',
  responses: {
    200: { description: 'The destinations, by name, without their credentials', schema: { type: 'object', required: ['destinations'], properties: { destinations: { type: 'array', items: destinationViewSchema } } } },
  },
  handler: ({ store, storage }) =>
    async (ctx) => {
      ctx.body = { destinations: await destinationOperations(store, storage, principalOf(ctx).account.id).list() };
    },
};
