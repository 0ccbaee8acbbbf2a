import { normalizeAllowedDomains } from './domains.ts';
import { Conflict, NotFound } from './errors.ts';
import type { ApiKey, ManagedBy, Site, Store, UsageRow } from './store/store.ts';

/**
 * The account-scoped operations on sites and keys, shared by the management API and the admin
 * CLI so that both enforce the same rules: objects of another account do not exist, domains are
 * validated on write, and objects owned by a Kubernetes resource are changed there, not here.
 */

export interface SiteView {
  id: string;
  name: string;
  allowedDomains: string[];
  managedBy: ManagedBy | null;
  createdAt: string;
  updatedAt: string;
}

export interface KeyView {
  id: string;
  name: string;
  kind: 'full' | 'site';
  siteId: string | null;
  restrictDomains: boolean;
  prefix: string;
  managedBy: ManagedBy | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A key view with its plaintext: only the answers to create and regenerate carry one. */
export interface IssuedKeyView extends KeyView {
  key: string;
}

export interface UsageView {
  sites: Record<string, Omit<UsageRow, 'scope' | 'id'>>;
  keys: Record<string, Omit<UsageRow, 'scope' | 'id'>>;
}

export function siteView(site: Site): SiteView {
  return {
    id: site.id,
    name: site.name,
    allowedDomains: site.allowedDomains,
    managedBy: site.managedBy,
    createdAt: site.createdAt.toISOString(),
    updatedAt: site.updatedAt.toISOString(),
  };
}

/** Never the hash: a key's secret material does not leave the server in any form. */
export function keyView(key: ApiKey): KeyView {
  return {
    id: key.id,
    name: key.name,
    kind: key.kind,
    siteId: key.siteId,
    restrictDomains: key.restrictDomains,
    prefix: key.prefix,
    managedBy: key.managedBy,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  };
}

/** The command that changes an object the operator owns: its Kubernetes resource. */
export function kubectlEditCommand(managedBy: ManagedBy): string {
  const plural = { Site: 'sites', ApiKey: 'apikeys', PageMonitor: 'pagemonitors' }[managedBy.kind];
  return `kubectl -n ${managedBy.namespace} edit ${plural}.viewfinder.dev ${managedBy.name}`;
}

export function managedConflict(what: 'Site' | 'API key' | 'Monitor', id: string, managedBy: ManagedBy): Conflict {
  return new Conflict(
    `${what} ${id} is managed by Kubernetes: edit the ${managedBy.kind} "${managedBy.name}" in namespace "${managedBy.namespace}" instead ` +
      `(${kubectlEditCommand(managedBy)})`,
  );
}

export interface SiteInput {
  name?: string;
  allowedDomains?: string[];
}

export interface KeyInput {
  name: string;
  siteId?: string;
  restrictDomains?: boolean;
}

export function accountOperations(store: Store, accountId: string) {
  const ownSite = async (siteId: string): Promise<Site> => {
    const site = await store.getSite(siteId);
    if (!site || site.accountId !== accountId) throw new NotFound(`Site ${siteId} not found`);
    return site;
  };
  const ownKey = async (keyId: string): Promise<ApiKey> => {
    const key = await store.getKey(keyId);
    if (!key || key.accountId !== accountId) throw new NotFound(`API key ${keyId} not found`);
    return key;
  };
  const unmanagedSite = async (siteId: string) => {
    const site = await ownSite(siteId);
    if (site.managedBy) throw managedConflict('Site', site.id, site.managedBy);
    return site;
  };
  const unmanagedKey = async (keyId: string) => {
    const key = await ownKey(keyId);
    if (key.managedBy) throw managedConflict('API key', key.id, key.managedBy);
    return key;
  };
  const issued = (key: ApiKey, secret: string): IssuedKeyView => ({ ...keyView(key), key: secret });

  return {
    ownSite,
    async listSites() {
      return (await store.listSites(accountId)).map(siteView);
    },
    async createSite(input: SiteInput) {
      const allowedDomains = normalizeAllowedDomains(input.allowedDomains ?? []);
      const name = input.name ?? allowedDomains[0] ?? 'Untitled site';
      return siteView(await store.createSite({ accountId, name, allowedDomains }));
    },
    async getSite(siteId: string) {
      return siteView(await ownSite(siteId));
    },
    async updateSite(siteId: string, input: SiteInput) {
      await unmanagedSite(siteId);
      const patch = {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.allowedDomains !== undefined ? { allowedDomains: normalizeAllowedDomains(input.allowedDomains) } : {}),
      };
      const updated = await store.updateSite(siteId, patch);
      if (!updated) throw new NotFound(`Site ${siteId} not found`);
      return siteView(updated);
    },
    async deleteSite(siteId: string) {
      await unmanagedSite(siteId);
      await store.deleteSite(siteId);
    },

    async listKeys() {
      return (await store.listKeys(accountId)).map(keyView);
    },
    async createKey(input: KeyInput) {
      const { key, secret } = await store.createKey({
        accountId,
        name: input.name,
        kind: input.siteId === undefined ? 'full' : 'site',
        siteId: input.siteId ?? null,
        restrictDomains: input.restrictDomains ?? false,
      });
      return issued(key, secret);
    },
    async getKey(keyId: string) {
      return keyView(await ownKey(keyId));
    },
    async deleteKey(keyId: string) {
      await unmanagedKey(keyId);
      await store.deleteKey(keyId);
    },
    async regenerateKey(keyId: string) {
      await unmanagedKey(keyId);
      const regenerated = await store.regenerateKey(keyId);
      if (!regenerated) throw new NotFound(`API key ${keyId} not found`);
      return issued(regenerated.key, regenerated.secret);
    },

    async usage(): Promise<UsageView> {
      const view: UsageView = { sites: {}, keys: {} };
      for (const { scope, id, ...counts } of await store.listUsage(accountId)) {
        view[scope === 'site' ? 'sites' : 'keys'][id] = counts;
      }
      return view;
    },
    /** Usage per UTC day from `sinceDay` (YYYY-MM-DD), for the dashboard's chart. */
    usageHistory(sinceDay: string) {
      return store.listUsageHistory(accountId, sinceDay);
    },
  };
}

export type AccountOperations = ReturnType<typeof accountOperations>;
