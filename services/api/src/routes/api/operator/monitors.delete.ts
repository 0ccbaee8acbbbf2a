import type { ApiRoute } from '../route.ts';
import { managedMonitorsFor } from './monitors.common.ts';
import { managedDeletedSchema, ownerOf } from './schemas.ts';

export const deleteManagedMonitorRoute: ApiRoute = {
  method: 'DELETE',
  path: '/api/operator/monitors/:namespace/:name',
  operationId: 'operatorDeleteMonitor',
  summary: 'Delete the monitor that a PageMonitor resource owns, with its runs and pictures',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'Deleted, or there was none', schema: managedDeletedSchema } },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = { deleted: await managedMonitorsFor(deps).remove(...ownerOf(ctx.params)) };
    },
};
