import { ServiceUnavailable } from '../../../../../../lib/errors.ts';
import { monitorViewSchema, runSummarySchema } from '../../../monitors/api-schema.ts';
import { managedMonitorOperations } from '../../../monitors/management.ts';
import type { HostedDeps, JsonSchema } from '../route.ts';

/** The operator's monitor operations (monitors/management.ts); 503 when this API runs no monitors. */
export function managedMonitorsFor(deps: HostedDeps) {
  if (!deps.monitors) throw new ServiceUnavailable('Page monitors are not running on this API');
  return managedMonitorOperations(deps.store, deps.monitors);
}

export const managedMonitorSchema: JsonSchema = {
  ...monitorViewSchema,
  required: [...monitorViewSchema.required, 'accountId', 'lastRun'],
  properties: { ...monitorViewSchema.properties, accountId: { type: 'string' }, lastRun: { anyOf: [runSummarySchema, { type: 'null' }], description: "The newest run, for the status: each page's verdict, without its report." } },
};
