import type { Context } from 'koa';
import { ServiceUnavailable } from '../../../../../lib/errors.ts';
import { principalOf } from '../../auth/hosted-key.ts';
import { monitorOperations } from '../../monitors/management.ts';
import type { HostedDeps } from './route.ts';

/** The authenticated account's monitor operations (monitors/management.ts). */
export function monitorsFor(deps: HostedDeps, ctx: Context) {
  if (!deps.monitors) throw new ServiceUnavailable('Page monitors are not running on this API');
  return monitorOperations(deps.store, deps.monitors, principalOf(ctx).account.id);
}
