import { putManagedMonitorSchema } from '../../../monitors/management.ts';
import type { ApiRoute } from '../route.ts';
import { managedMonitorSchema, managedMonitorsFor } from './monitors.common.ts';
import { ownerOf } from './schemas.ts';

export const putManagedMonitorRoute: ApiRoute = {
  method: 'PUT',
  path: '/api/operator/monitors/:namespace/:name',
  operationId: 'operatorPutMonitor',
  summary: 'Create or update the monitor that a PageMonitor resource owns',
  description:
    'Idempotent: matched on the resource (namespace, name), so a retried call never makes a second monitor; a resource created again (a new uid) starts a new monitor. Checked as createMonitor is.',
  tag: 'Operator',
  access: 'operator',
  body: putManagedMonitorSchema,
  responses: { 200: { description: 'The monitor, updated', schema: managedMonitorSchema }, 201: { description: 'The monitor, created', schema: managedMonitorSchema } },
  errors: { 404: 'No such account', 409: 'The monitor belongs to another account' },
  handler: (deps) =>
    async (ctx) => {
      const { monitor, created } = await managedMonitorsFor(deps).put(...ownerOf(ctx.params), ctx.request.body);
      ctx.status = created ? 201 : 200;
      ctx.body = monitor;
    },
};
