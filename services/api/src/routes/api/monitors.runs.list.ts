import { runSummarySchema } from '../../monitors/api-schema.ts';
import { withoutReports } from '../../monitors/management.ts';
import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';

export const listMonitorRunsRoute: ApiRoute = {
  method: 'GET',
  path: '/api/monitors/:monitorId/runs',
  operationId: 'listMonitorRuns',
  summary: "A monitor's runs, newest first (at most historyLimit)",
  tag: 'Monitors',
  access: 'full-access',
  responses: { 200: { description: 'Each run with every page\'s outcome, diff ratio, changed regions, picture ids and verdict; the report is in the run\'s own answer', schema: { type: 'array', items: runSummarySchema } } },
  errors: { 404: 'No such monitor in this account' },
  handler: (deps) =>
    async (ctx) => {
      ctx.body = (await monitorsFor(deps, ctx).runs(param(ctx.params, 'monitorId'))).map(withoutReports);
    },
};
