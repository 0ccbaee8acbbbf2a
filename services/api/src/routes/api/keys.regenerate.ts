import { operationsFor } from './operations.ts';
import { param, type ApiRoute } from './route.ts';
import { issuedKeySchema } from './schemas.ts';

export const regenerateKeyRoute: ApiRoute = {
  method: 'POST',
  path: '/api/keys/:keyId/regenerate',
  operationId: 'regenerateKey',
  summary: 'Replace a key with a new one; the old one stops working at once',
  tag: 'API keys',
  access: 'full-access',
  responses: { 200: { description: 'The key with its new secret in `key`, shown once', schema: issuedKeySchema } },
  errors: { 404: 'No such key in this account', 409: 'The key is managed by a Kubernetes ApiKey resource: rotate it there' },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await operationsFor(store, ctx).regenerateKey(param(ctx.params, 'keyId'));
    },
};
