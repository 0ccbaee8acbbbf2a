import { managedOperations } from '../../../../../../lib/management.ts';
import type { ApiRoute } from '../route.ts';
import { managedKeySchema, ownerOf } from './schemas.ts';

export const getManagedKeyRoute: ApiRoute = {
  method: 'GET',
  path: '/api/operator/keys/:namespace/:name',
  operationId: 'operatorGetKey',
  summary: 'Get the key that an ApiKey resource owns (never its secret)',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'The key', schema: managedKeySchema } },
  errors: { 404: 'No key is managed by that ApiKey' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = await managedOperations(store).getKey(...ownerOf(ctx.params));
    },
};
