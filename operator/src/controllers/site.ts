import { normalizeAllowedDomains } from '../../../lib/domains.ts';
import type { ManagedByRef, Site } from '../../../lib/store/store.ts';
import { REASONS, withReady } from '../conditions.ts';
import type { SiteResource } from '../resources.ts';
import {
  NotReady,
  readyState,
  reconcileResource,
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
export function reconcileSite(deps: ControllerDeps, namespace: string, name: string): Promise<ReconcileResult> {
  const { kube, store, logger } = deps;
  const ref: ManagedByRef = { kind: 'Site', namespace, name };
  const object = `${namespace}/${name}`;
  return reconcileResource<SiteResource>(deps, 'Site', namespace, name, {
    async removeFromStore() {
      // The store site goes with the keys scoped to it; nothing to do when it is gone already.
      const stored = await store.findSiteByManagedBy(ref);
      if (!stored) return;
      await store.deleteSite(stored.id);
      logger.info({ kind: 'Site', object, siteId: stored.id }, 'Deleted the site from the store');
    },
    async apply(site, now) {
      let allowedDomains: string[];
      try {
        allowedDomains = normalizeAllowedDomains(site.spec.allowedDomains ?? []);
      } catch (err) {
        throw new NotReady(REASONS.InvalidSpec, `spec.${(err as Error).message}`, false);
      }
      await requireAccount(store, site.spec.account);
      const wanted = { accountId: site.spec.account, name: object, allowedDomains, managedBy: { ...ref, uid: site.metadata.uid } };
      const existing = await storeCall(() => store.findSiteByManagedBy(ref));
      let stored: Site;
      if (existing && storeMatches(existing, wanted)) {
        stored = existing;
      } else {
        stored = await storeCall(() => store.upsertManagedSite(wanted));
        logger.info({ kind: 'Site', object, siteId: stored.id, domains: allowedDomains.length }, existing ? 'Updated the site in the store' : 'Created the site in the store');
      }
      const message = `Site ${stored.id} allows ${allowedDomains.length === 0 ? 'no domains' : allowedDomains.join(', ')}`;
      await writeStatus(kube, site, {
        siteId: stored.id,
        observedGeneration: site.metadata.generation,
        conditions: withReady(site.status?.conditions, readyState(message), site.metadata.generation, now),
      });
    },
  });
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
