import type { ApiRoute } from '../route.ts';
import { managedMonitorSchema, managedMonitorsFor } from './monitors.common.ts';
import { ownerOf } from './schemas.ts';

export const getManagedMonitorRoute: ApiRoute = {
  method: 'GET',
  path: '/api/operator/monitors/:namespace/:name',
  operationId: 'operatorGetMonitor',
  summary: 'Get the monitor that a PageMonitor resource owns, with its last run',
  tag: 'Operator',
  access: 'operator',
  responses: { 200: { description: 'The monitor and its last run', schema: managedMonitorSchema } },
  errors: { 404: 'No monitor is managed by that PageMonitor' },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = await managedMonitorsFor(deps).get(...ownerOf(ctx.params));
    },
};
