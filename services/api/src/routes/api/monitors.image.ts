import { monitorsFor } from './monitors.operations.ts';
import { param, type ApiRoute } from './route.ts';

export const getMonitorImageRoute: ApiRoute = {
  method: 'GET',
  path: '/api/monitors/:monitorId/images/:imageId',
  operationId: 'getMonitorImage',
  summary: "A monitor's picture: a run's capture or diff, or a baseline (PNG)",
  tag: 'Monitors',
  access: 'full-access',
  responses: { 200: { description: 'The PNG', alternatives: { 'image/png': { type: 'string', format: 'binary' } } } },
  errors: { 404: 'No such monitor, or no such picture of it' },
  handler: (deps) =>
    async (ctx) => {
      const image = await monitorsFor(deps, ctx).image(param(ctx.params, 'monitorId'), param(ctx.params, 'imageId'));
      ctx.type = 'image/png';
      // Pictures never change under their id.
      ctx.set('Cache-Control', 'private, max-age=31536000, immutable');
      ctx.body = image;
    },
};
