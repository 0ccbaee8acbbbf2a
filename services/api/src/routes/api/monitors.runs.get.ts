import { runViewSchema } from '../../monitors/api-schema.ts';
import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';

export const getMonitorRunRoute: ApiRoute = {
  method: 'GET',
  path: '/api/monitors/:monitorId/runs/:runId',
  operationId: 'getMonitorRun',
  summary: 'One run of a monitor, with each page\'s report and the verdict of its checks',
  tag: 'Monitors',
  access: 'full-access',
  responses: {
    200: {
      description: "Each page's outcome, diff ratio, regions and picture ids, the report of its visit (null when the capture failed) and its checks' verdict (null without checks)",
      schema: runViewSchema,
    },
  },
  errors: { 404: 'No such monitor in this account, or no such run of it' },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = await monitorsFor(deps, ctx).run(param(ctx.params, 'monitorId'), param(ctx.params, 'runId'));
    },
};
