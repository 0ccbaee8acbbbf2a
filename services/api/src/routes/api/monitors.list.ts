import { monitorViewSchema } from '../../monitors/api-schema.ts';
import { monitorsFor } from './monitors.operations.ts';
import type { ApiRoute } from './route.ts';

export const listMonitorsRoute: ApiRoute = {
  method: 'GET',
  path: '/api/monitors',
  operationId: 'listMonitors',
  summary: "List the account's page monitors",
  tag: 'Monitors',
  access: 'full-access',
  responses: { 200: { description: 'The monitors, oldest first', schema: { type: 'array', items: monitorViewSchema } } },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = await monitorsFor(deps, ctx).list();
    },
};
