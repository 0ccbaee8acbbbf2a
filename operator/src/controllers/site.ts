import { normalizeAllowedDomains } from '../../../lib/domains.ts';
import type { ManagedSite, PutManagedSite } from '../../../lib/operator-api.ts';
import { REASONS, withReady } from '../conditions.ts';
import type { SiteResource } from '../resources.ts';
import { reconcileSiteStorage } from './site-storage.ts';
import {
  NotReady,
  apiCall,
  readyState,
  reconcileResource,
  requireAccount,
  writeStatus,
  type ControllerDeps,
  type ReconcileResult,
} from './common.ts';

/**
 * The Site controller: a Site resource becomes a site in the API's store, owned by it (managedBy),
 * with its allowedDomains normalized exactly as the management API does, and its spec.storage a
 * storage destination of the account (site-storage.ts). Level-based: it reads the
 * resource and the API's site, and writes only what differs, so running it twice changes nothing.
 */
export function reconcileSite(deps: ControllerDeps, namespace: string, name: string): Promise<ReconcileResult> {
  const { kube, api, logger } = deps;
  const object = `${namespace}/${name}`;
  return reconcileResource<SiteResource>(deps, 'Site', namespace, name, {
    async removeFromStore() {
      // The site goes with the keys scoped to it, and its storage destination (not the objects in
      // the bucket); nothing to do when they are gone already.
      const destination = await api.deleteDestination(namespace, name);
      if (destination) logger.info({ kind: 'Site', object, destination }, 'Deleted the storage destination from the store');
      const siteId = await api.deleteSite(namespace, name);
      if (siteId) logger.info({ kind: 'Site', object, siteId }, 'Deleted the site from the store');
    },
    async apply(site, now) {
      let allowedDomains: string[];
      try {
        allowedDomains = normalizeAllowedDomains(site.spec.allowedDomains ?? []);
      } catch (err) {
        throw new NotReady(REASONS.InvalidSpec, `spec.${(err as Error).message}`, false);
      }
      await requireAccount(api, site.spec.account);
      const wanted: PutManagedSite = { accountId: site.spec.account, name: object, allowedDomains, uid: site.metadata.uid };
      const existing = await apiCall(() => api.getSite(namespace, name));
      let stored: ManagedSite;
      if (existing && siteMatches(existing, wanted)) {
        stored = existing;
      } else {
        stored = await apiCall(() => api.putSite(namespace, name, wanted));
        logger.info({ kind: 'Site', object, siteId: stored.id, domains: allowedDomains.length }, existing ? 'Updated the site in the store' : 'Created the site in the store');
      }
      const storage = await reconcileSiteStorage(deps, site);
      const message =
        `Site ${stored.id} allows ${allowedDomains.length === 0 ? 'no domains' : allowedDomains.join(', ')}` +
        (storage ? `; storage destination ${storage.destination} writes to bucket ${site.spec.storage?.bucket}` : '');
      // Replaced whole, so that status.storage goes with spec.storage.
      await writeStatus(
        kube,
        site,
        {
          siteId: stored.id,
          ...(storage ? { storage } : {}),
          observedGeneration: site.metadata.generation,
          conditions: withReady(site.status?.conditions, readyState(message), site.metadata.generation, now),
        },
        { replace: true },
      );
    },
  });
}

function siteMatches(existing: ManagedSite, wanted: PutManagedSite): boolean {
  return (
    existing.accountId === wanted.accountId &&
    existing.name === wanted.name &&
    existing.managedBy.uid === wanted.uid &&
    existing.allowedDomains.length === wanted.allowedDomains.length &&
    existing.allowedDomains.every((domain, index) => domain === wanted.allowedDomains[index])
  );
}
