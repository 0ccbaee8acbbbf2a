import { operationsFor } from './operations.ts';
import type { ApiRoute } from './route.ts';
import { keySchema } from './schemas.ts';

export const listKeysRoute: ApiRoute = {
  method: 'GET',
  path: '/api/keys',
  operationId: 'listKeys',
  summary: "List the account's API keys (never their secrets)",
  tag: 'API keys',
  access: 'full-access',
  responses: { 200: { description: 'The keys', schema: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: keySchema } } } } },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = { keys: await operationsFor(store, ctx).listKeys() };
    },
};
