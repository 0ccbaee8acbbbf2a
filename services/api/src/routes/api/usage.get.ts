import { operationsFor } from './operations.ts';
import type { ApiRoute } from './route.ts';
import { usageSchema } from './schemas.ts';

export const usageRoute: ApiRoute = {
  method: 'GET',
  path: '/api/usage',
  operationId: 'getUsage',
  summary: 'Captures, failures and image bytes per site and per key',
  tag: 'Usage',
  access: 'full-access',
  responses: { 200: { description: 'Usage since the site or key was created', schema: usageSchema } },
  handler: ({ store }) =>
    async (ctx) => {
      ctx.body = await operationsFor(store, ctx).usage();
    },
};
