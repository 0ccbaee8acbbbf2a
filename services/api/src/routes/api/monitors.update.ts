import { monitorViewSchema, updateMonitorSchema } from '../../monitors/api-schema.ts';
import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';

export const updateMonitorRoute: ApiRoute = {
  method: 'PATCH',
  path: '/api/monitors/:monitorId',
  operationId: 'updateMonitor',
  summary: 'Change a page monitor',
  description: 'Fields given replace the current ones (pages replaces the whole list; compare merges). Baselines of pages no longer listed are dropped.',
  tag: 'Monitors',
  access: 'full-access',
  body: updateMonitorSchema,
  responses: { 200: { description: 'The updated monitor', schema: monitorViewSchema } },
  errors: { 404: 'No such monitor in this account', 409: 'The monitor is managed by a Kubernetes PageMonitor: edit that instead, or the name is taken' },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = await monitorsFor(deps, ctx).update(param(ctx.params, 'monitorId'), ctx.request.body);
    },
};
