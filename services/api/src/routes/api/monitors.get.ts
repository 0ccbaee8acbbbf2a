import { monitorViewSchema } from '../../monitors/api-schema.ts';
import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';

export const getMonitorRoute: ApiRoute = {
  method: 'GET',
  path: '/api/monitors/:monitorId',
  operationId: 'getMonitor',
  summary: 'Get a page monitor',
  tag: 'Monitors',
  access: 'full-access',
  responses: { 200: { description: 'The monitor', schema: monitorViewSchema } },
  errors: { 404: 'No such monitor in this account' },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = await monitorsFor(deps, ctx).get(param(ctx.params, 'monitorId'));
    },
};
