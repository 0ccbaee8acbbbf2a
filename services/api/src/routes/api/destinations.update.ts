import { compileValidator } from '../../validation.ts';
import { principalOf } from '../../auth/hosted-key.ts';
import { destinationOperations, type DestinationUpdate } from '../../storage/destinations.ts';
import { destinationMessages, destinationProblems, destinationViewSchema, updateDestinationSchema } from '../../storage/schemas.ts';
import { param, type ApiRoute } from './route.ts';

export const validate = compileValidator<DestinationUpdate>(updateDestinationSchema, destinationMessages, destinationProblems);

export const updateDestinationRoute: ApiRoute = {
  method: 'PATCH',
  path: '/api/destinations/:name',
  operationId: 'updateDestination',
  summary: 'Change a storage destination (or replace its credentials)',
  description: 'A changed endpoint, bucket or pathStyle passes the network guard again. The next upload uses the new values.',
  tag: 'Storage',
  access: 'full-access',
  body: updateDestinationSchema,
  responses: { 200: { description: 'The destination, without its credentials', schema: destinationViewSchema } },
  errors: {
    403: 'The key is scoped to a site; or the endpoint is refused by the network guard',
    404: 'No such destination in this account',
    503: 'The endpoint\'s name did not resolve in time; try again',
  },
  handler: ({ store, storage }) =>
    async (ctx) => {
      const update = validate(ctx.request.body);
      ctx.body = await destinationOperations(store, storage, principalOf(ctx).account.id).update(param(ctx.params, 'name'), update);
    },
};
