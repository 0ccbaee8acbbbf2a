import { managedOperations } from '../../../../../../lib/management.ts';
import type { ApiRoute } from '../route.ts';
import { issuedManagedKeySchema, ownerOf } from './schemas.ts';

export const regenerateManagedKeyRoute: ApiRoute = {
  method: 'POST',
  path: '/api/operator/keys/:namespace/:name/regenerate',
  operationId: 'operatorRegenerateKey',
  summary: 'Replace the key that an ApiKey resource owns; the new key comes back once',
  description: 'The old key stops working in the same write that stores the new one.',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'The key with its new plaintext in `key`', schema: issuedManagedKeySchema } },
  errors: { 404: 'No key is managed by that ApiKey' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await managedOperations(store).regenerateKey(...ownerOf(ctx.params));
    },
};
