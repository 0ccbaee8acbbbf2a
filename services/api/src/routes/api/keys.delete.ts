import { operationsFor } from './operations.ts';
import { param, type ApiRoute } from './route.ts';
import { deletedSchema } from './schemas.ts';

export const deleteKeyRoute: ApiRoute = {
  method: 'DELETE',
  path: '/api/keys/:keyId',
  operationId: 'deleteKey',
  summary: 'Delete an API key; it stops working at once',
  tag: 'API keys',
  access: 'full-access',
  responses: { 200: { description: 'Deleted', schema: deletedSchema } },
  errors: { 404: 'No such key in this account', 409: 'The key is managed by a Kubernetes ApiKey resource: delete that instead' },
  handler: ({ store }) =>
    async (ctx) => {
      const keyId = param(ctx.params, 'keyId');
      await operationsFor(store, ctx).deleteKey(keyId);
      ctx.body = { deleted: keyId };
    },
};
