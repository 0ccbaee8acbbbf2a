import { normalizeAllowedDomains } from '../../../lib/domains.ts';
import type { ManagedByRef, Site } from '../../../lib/store/store.ts';
import { REASONS, withReady } from '../conditions.ts';
import type { SiteResource } from '../resources.ts';
import {
  NotReady,
  ensureFinalizer,
  failReconcile,
  finalizeIfDeleted,
  readyState,
  requireAccount,
  storeCall,
  writeStatus,
  type ControllerDeps,
  type ReconcileResult,
} from './common.ts';

/**
 * The Site controller: a Site resource becomes a site in the store, owned by it (managedBy), with
 * its allowedDomains normalized exactly as the management API does. Level-based: it reads the
 * resource and the store, and writes only what differs, so running it twice changes nothing.
 */
export async function reconcileSite(deps: ControllerDeps, namespace: string, name: string): Promise<ReconcileResult> {
  const { kube, store, logger } = deps;
  const ref: ManagedByRef = { kind: 'Site', namespace, name };
  const site = await kube.getResource<SiteResource>('Site', namespace, name);

  const deleted = await finalizeIfDeleted(deps, site, async () => {
    // The store site goes with the keys scoped to it; nothing to do when it is gone already.
    const stored = await store.findSiteByManagedBy(ref);
    if (!stored) return;
    await store.deleteSite(stored.id);
    logger.info({ kind: 'Site', object: `${namespace}/${name}`, siteId: stored.id }, 'Deleted the site from the store');
  });
  if (deleted || !site) return deleted ?? { outcome: 'deleted' };

  const current = await ensureFinalizer(kube, site);
  try {
    let allowedDomains: string[];
    try {
      allowedDomains = normalizeAllowedDomains(current.spec.allowedDomains ?? []);
    } catch (err) {
      throw new NotReady(REASONS.InvalidSpec, `spec.${(err as Error).message}`, false);
    }
    await requireAccount(store, current.spec.account);
    const wanted = {
      accountId: current.spec.account,
      name: `${namespace}/${name}`,
      allowedDomains,
      managedBy: { ...ref, uid: current.metadata.uid },
    };
    const existing = await storeCall(() => store.findSiteByManagedBy(ref));
    let stored: Site;
    if (existing && storeMatches(existing, wanted)) {
      stored = existing;
    } else {
      stored = await storeCall(() => store.upsertManagedSite(wanted));
      logger.info({ kind: 'Site', object: `${namespace}/${name}`, siteId: stored.id, domains: allowedDomains.length }, existing ? 'Updated the site in the store' : 'Created the site in the store');
    }
    const message = `Site ${stored.id} allows ${allowedDomains.length === 0 ? 'no domains' : allowedDomains.join(', ')}`;
    await writeStatus(kube, current, {
      siteId: stored.id,
      observedGeneration: current.metadata.generation,
      conditions: withReady(current.status?.conditions, readyState(message), current.metadata.generation, (deps.now ?? (() => new Date()))()),
    });
    return { outcome: 'success' };
  } catch (err) {
    return failReconcile(deps, current, err);
  }
}

function storeMatches(existing: Site, wanted: { accountId: string; name: string; allowedDomains: string[]; managedBy: { uid: string } }): boolean {
  return (
    existing.accountId === wanted.accountId &&
    existing.name === wanted.name &&
    existing.managedBy?.uid === wanted.managedBy.uid &&
    existing.allowedDomains.length === wanted.allowedDomains.length &&
    existing.allowedDomains.every((domain, index) => domain === wanted.allowedDomains[index])
  );
}
