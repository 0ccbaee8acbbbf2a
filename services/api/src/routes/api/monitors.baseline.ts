import { acceptBaselineSchema, monitorViewSchema } from '../../monitors/api-schema.ts';
import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';

export const acceptMonitorBaselineRoute: ApiRoute = {
  method: 'POST',
  path: '/api/monitors/:monitorId/baseline',
  operationId: 'acceptMonitorBaseline',
  summary: "Accept a run's picture of a page as that page's baseline",
  tag: 'Monitors',
  access: 'full-access',
  body: acceptBaselineSchema,
  responses: { 200: { description: 'The monitor with its new baseline', schema: monitorViewSchema } },
  errors: { 404: 'No such monitor, run or page', 409: 'That run took no picture of the page (it failed)' },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = await monitorsFor(deps, ctx).acceptBaseline(param(ctx.params, 'monitorId'), ctx.request.body);
    },
};
