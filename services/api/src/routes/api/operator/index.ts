import type { ApiRoute } from '../route.ts';
import { getOperatorAccountRoute } from './accounts.get.ts';
import { deleteManagedDestinationRoute, getManagedDestinationRoute, putManagedDestinationRoute } from './destinations.ts';
import { deleteManagedKeyRoute } from './keys.delete.ts';
import { getManagedKeyRoute } from './keys.get.ts';
import { putManagedKeyRoute } from './keys.put.ts';
import { regenerateManagedKeyRoute } from './keys.regenerate.ts';
import { verifyManagedKeyRoute } from './keys.verify.ts';
import { deleteManagedSiteRoute } from './sites.delete.ts';
import { getManagedSiteRoute } from './sites.get.ts';
import { putManagedSiteRoute } from './sites.put.ts';
import { deleteManagedMonitorRoute } from './monitors.delete.ts';
import { getManagedMonitorRoute } from './monitors.get.ts';
import { putManagedMonitorRoute } from './monitors.put.ts';

/** The operator-facing routes (issue 20), authenticated by a trusted ServiceAccount's token. */
export const operatorRoutes: ApiRoute[] = [
  getOperatorAccountRoute,
  getManagedSiteRoute,
  putManagedSiteRoute,
  deleteManagedSiteRoute,
  getManagedKeyRoute,
  putManagedKeyRoute,
  deleteManagedKeyRoute,
  regenerateManagedKeyRoute,
  verifyManagedKeyRoute,
  getManagedMonitorRoute,
  putManagedMonitorRoute,
  deleteManagedMonitorRoute,
  getManagedDestinationRoute,
  putManagedDestinationRoute,
  deleteManagedDestinationRoute,
];
