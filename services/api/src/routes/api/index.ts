import { createCaptureRoute } from './captures.create.ts';
import { getCaptureRoute } from './captures.get.ts';
import { createKeyRoute } from './keys.create.ts';
import { deleteKeyRoute } from './keys.delete.ts';
import { listKeysRoute } from './keys.list.ts';
import { regenerateKeyRoute } from './keys.regenerate.ts';
import { renderRoute } from './render.get.ts';
import { openApiRoute } from './openapi.get.ts';
import { operatorRoutes } from './operator/index.ts';
import type { ApiRoute } from './route.ts';
import { hostedScreenshotRoute } from './screenshot.post.ts';
import { createSiteRoute } from './sites.create.ts';
import { deleteSiteRoute } from './sites.delete.ts';
import { getSiteRoute } from './sites.get.ts';
import { listSitesRoute } from './sites.list.ts';
import { updateSiteRoute } from './sites.update.ts';
import { usageRoute } from './usage.get.ts';
import { acceptMonitorBaselineRoute } from './monitors.baseline.ts';
import { createMonitorRoute } from './monitors.create.ts';
import { deleteMonitorRoute } from './monitors.delete.ts';
import { getMonitorRoute } from './monitors.get.ts';
import { getMonitorImageRoute } from './monitors.image.ts';
import { listMonitorsRoute } from './monitors.list.ts';
import { runMonitorNowRoute } from './monitors.runs.create.ts';
import { listMonitorRunsRoute } from './monitors.runs.list.ts';
import { getMonitorRunRoute } from './monitors.runs.get.ts';
import { updateMonitorRoute } from './monitors.update.ts';
import { createDestinationRoute } from './destinations.create.ts';
import { deleteDestinationRoute } from './destinations.delete.ts';
import { getDestinationRoute } from './destinations.get.ts';
import { listDestinationsRoute } from './destinations.list.ts';
import { updateDestinationRoute } from './destinations.update.ts';

/** Every route of MODE=hosted, in the order the OpenAPI document lists them. */
export function hostedRoutes(version: string): ApiRoute[] {
  const routes: ApiRoute[] = [
    hostedScreenshotRoute,
    listSitesRoute,
    createSiteRoute,
    getSiteRoute,
    updateSiteRoute,
    deleteSiteRoute,
    listKeysRoute,
    createKeyRoute,
    deleteKeyRoute,
    regenerateKeyRoute,
    usageRoute,
    renderRoute,
    createCaptureRoute,
    getCaptureRoute,
    listMonitorsRoute,
    createMonitorRoute,
    getMonitorRoute,
    updateMonitorRoute,
    deleteMonitorRoute,
    listMonitorRunsRoute,
    getMonitorRunRoute,
    runMonitorNowRoute,
    acceptMonitorBaselineRoute,
    getMonitorImageRoute,
    listDestinationsRoute,
    createDestinationRoute,
    getDestinationRoute,
    updateDestinationRoute,
    deleteDestinationRoute,
    ...operatorRoutes,
  ];
  routes.push(openApiRoute(() => routes, version));
  return routes;
}
