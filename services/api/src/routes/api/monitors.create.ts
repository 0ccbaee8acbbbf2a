import { createMonitorSchema, monitorViewSchema } from '../../monitors/api-schema.ts';
import { monitorsFor } from './monitors.operations.ts';
import type { ApiRoute } from './route.ts';

export const createMonitorRoute: ApiRoute = {
  method: 'POST',
  path: '/api/monitors',
  operationId: 'createMonitor',
  summary: 'Create a page monitor',
  description:
    'Its pages are captured on the schedule and compared with their baselines (the first picture, until another is accepted). A schedule that never fires, a time zone that does not exist, a page URL outside the site\'s allowed domains or a repeated page name is a 400.',
  tag: 'Monitors',
  access: 'full-access',
  body: createMonitorSchema,
  responses: { 201: { description: 'The new monitor', schema: monitorViewSchema } },
  errors: { 409: 'The account already has a monitor of that name' },
  handler: (deps) =>
    async (ctx) => {
      ctx.status = 201;
      ctx.body = await monitorsFor(deps, ctx).create(ctx.request.body);
    },
};
