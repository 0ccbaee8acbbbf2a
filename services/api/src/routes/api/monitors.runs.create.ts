import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';

export const runMonitorNowRoute: ApiRoute = {
  method: 'POST',
  path: '/api/monitors/:monitorId/runs',
  operationId: 'runMonitorNow',
  summary: 'Run a page monitor now',
  description:
    'Queues a run outside the schedule (also for a suspended monitor); it appears in the runs once finished. While a run-now of the monitor is queued or running, answers that run\'s jobId and queues nothing.',
  tag: 'Monitors',
  access: 'full-access',
  responses: { 202: { description: 'Queued', schema: { type: 'object', required: ['jobId'], properties: { jobId: { type: 'string' } } } } },
  errors: { 404: 'No such monitor in this account' },
  handler: (deps) =>
    async (ctx) => {
      ctx.status = 202;
      ctx.body = await monitorsFor(deps, ctx).runNow(param(ctx.params, 'monitorId'));
    },
};
