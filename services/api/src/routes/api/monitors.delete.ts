import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';
import { deletedSchema } from './schemas.ts';

export const deleteMonitorRoute: ApiRoute = {
  method: 'DELETE',
  path: '/api/monitors/:monitorId',
  operationId: 'deleteMonitor',
  summary: 'Delete a page monitor with its runs and pictures',
  tag: 'Monitors',
  access: 'full-access',
  responses: { 200: { description: 'Deleted', schema: deletedSchema } },
  errors: { 404: 'No such monitor in this account', 409: 'The monitor is managed by a Kubernetes PageMonitor: delete that instead' },
  handler: (deps) =>
    async (ctx) => {
      const monitorId = param(ctx.params, 'monitorId');
      await monitorsFor(deps, ctx).remove(monitorId);
      ctx.body = { deleted: monitorId };
    },
};
