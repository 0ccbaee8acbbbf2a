import type { Context } from 'koa';
import { accountOperations, type AccountOperations } from '../../../../../lib/management.ts';
import type { Store } from '../../../../../lib/store/store.ts';
import { principalOf } from '../../auth/hosted-key.ts';

/** The authenticated account's operations: every management route works inside one account. */
export function operationsFor(store: Store, ctx: Context): AccountOperations {
  return accountOperations(store, principalOf(ctx).account.id);
}
