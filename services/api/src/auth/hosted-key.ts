import type { Context, Middleware } from 'koa';
import { hashApiKey, hashesEqual, looksLikeApiKey } from '../../../../lib/api-keys.ts';
import { Forbidden, Unauthorized } from '../../../../lib/errors.ts';
import type { Logger } from '../../../../lib/logger.ts';
import type { Account, ApiKey, Store } from '../../../../lib/store/store.ts';
import { recordAuthFailure } from '../metrics.ts';
import { presentedKey } from './self-hosted-key.ts';

/**
 * Hosted authentication (SPEC 5.2): the key in X-API-Key (or Authorization: Bearer) is hashed and
 * looked up, so the plaintext is never compared, stored or logged. The key is read from the store
 * on every request: a regenerated or deleted key fails on the very next one.
 */
export interface Principal {
  key: ApiKey;
  account: Account;
}

export type Access = 'any-key' | 'full-access';

/** lastUsedAt is kept to the minute: a write per request would only add load to the store. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function requireHostedKey(store: Store, logger: Logger, access: Access): Middleware {
  return async (ctx, next) => {
    const presented = presentedKey(ctx.headers);
    if (presented === undefined) {
      recordAuthFailure('missing_key');
      throw new Unauthorized('Invalid API key: none was given');
    }
    const principal = await authenticate(store, presented);
    if (!principal) {
      recordAuthFailure('invalid_key');
      logger.info({ requestId: ctx.state.requestId }, 'Rejected an invalid API key');
      throw new Unauthorized();
    }
    if (access === 'full-access' && principal.key.kind !== 'full') {
      recordAuthFailure('site_forbidden');
      throw new Forbidden('This operation needs a full-access API key; this one is scoped to a site');
    }
    ctx.state.principal = principal;
    logger.debug({ requestId: ctx.state.requestId, keyId: principal.key.id, accountId: principal.account.id }, 'Authenticated an API key');
    await touchKey(store, principal.key);
    await next();
  };
}

export async function touchKey(store: Store, key: ApiKey): Promise<void> {
  const now = new Date();
  if (key.lastUsedAt === null || now.getTime() - key.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await store.touchKey(key.id, now);
  }
}

/** The key and its account for a presented plaintext key, or null when it is no valid key. */
export async function authenticate(store: Store, presented: string): Promise<Principal | null> {
  if (!looksLikeApiKey(presented)) return null;
  const hash = hashApiKey(presented);
  const key = await store.findKeyByHash(hash);
  // The lookup is by hash already; comparing again in constant time guards against a backend
  // that matched loosely (collation, trailing spaces) without leaking where two hashes differ.
  if (!key || !hashesEqual(key.hash, hash)) return null;
  const account = await store.getAccount(key.accountId);
  return account ? { key, account } : null;
}

export function principalOf(ctx: Context): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw new Unauthorized();
  return principal;
}
