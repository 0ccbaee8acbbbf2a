import { hashesEqual } from './api-keys.ts';
import { normalizeAllowedDomains } from './domains.ts';
import { Conflict, NotFound } from './errors.ts';
import { signRenderLink, type LinkToSign } from './render-links.ts';
import type { IssuedManagedKey, ManagedKey, ManagedSite, PutManagedKey, PutManagedKeyAnswer, PutManagedSite } from './operator-api.ts';
import type { ApiKey, IssuedKey, ManagedBy, ManagedByRef, Site, Store, UsageRow } from './store/store.ts';

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
  unsignedLinks: boolean;
  prefix: string;
  managedBy: ManagedBy | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A key view with its plaintext and signing secret: only the answers to create and regenerate carry them. */
export interface IssuedKeyView extends KeyView {
  key: string;
  signingSecret: string;
}

export interface UsageView {
  sites: Record<string, Omit<UsageRow, 'scope' | 'id'>>;
  keys: Record<string, Omit<UsageRow, 'scope' | 'id'>>;
  /** Page monitors' captures, which use no key. */
  monitors: Record<string, Omit<UsageRow, 'scope' | 'id'>>;
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
    unsignedLinks: key.unsignedLinks,
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

export function managedConflict(what: 'Site' | 'API key' | 'Monitor' | 'Storage destination', id: string, managedBy: ManagedBy): Conflict {
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
  unsignedLinks?: boolean;
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
  const issued = ({ key, secret, signingSecret }: IssuedKey): IssuedKeyView => ({ ...keyView(key), key: secret, signingSecret });

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
      return issued(
        await store.createKey({
          accountId,
          name: input.name,
          kind: input.siteId === undefined ? 'full' : 'site',
          siteId: input.siteId ?? null,
          restrictDomains: input.restrictDomains ?? false,
          unsignedLinks: input.unsignedLinks ?? false,
        }),
      );
    },
    async getKey(keyId: string) {
      return keyView(await ownKey(keyId));
    },
    async deleteKey(keyId: string) {
      await unmanagedKey(keyId);
      await store.deleteKey(keyId);
    },
    /** A signed render link made with the key's signing secret, which stays on the server. */
    async signRenderLink(keyId: string, link: Omit<LinkToSign, 'keyId' | 'signingSecret'>) {
      const key = await ownKey(keyId);
      const signingSecret = await store.getSigningSecret(key.id);
      if (!signingSecret) throw new Conflict(`API key "${key.name}" has no signing secret yet: regenerate it to get one`);
      return signRenderLink({ ...link, keyId: key.id, signingSecret });
    },
    async regenerateKey(keyId: string) {
      await unmanagedKey(keyId);
      const regenerated = await store.regenerateKey(keyId);
      if (!regenerated) throw new NotFound(`API key ${keyId} not found`);
      return issued(regenerated);
    },

    async usage(): Promise<UsageView> {
      const view: UsageView = { sites: {}, keys: {}, monitors: {} };
      const group = { site: 'sites', key: 'keys', monitor: 'monitors' } as const;
      for (const { scope, id, ...counts } of await store.listUsage(accountId)) view[group[scope]][id] = counts;
      return view;
    },
    /** Usage per UTC day from `sinceDay` (YYYY-MM-DD), for the dashboard's chart. */
    usageHistory(sinceDay: string) {
      return store.listUsageHistory(accountId, sinceDay);
    },
  };
}

export type AccountOperations = ReturnType<typeof accountOperations>;

/**
 * The operator's operations (issue 20): objects looked up by the Kubernetes resource that owns
 * them, across accounts (the operator is trusted by its ServiceAccount, not by an account key).
 * Writes are the store's idempotent upserts, so a retried call never makes a second object.
 */
export function managedOperations(store: Store) {
  const ref = (kind: ManagedBy['kind'], namespace: string, name: string): ManagedByRef => ({ kind, namespace, name });
  const managedSite = (site: Site): ManagedSite => ({ ...siteView(site), accountId: site.accountId, managedBy: site.managedBy as ManagedBy });
  const managedKey = (key: ApiKey): ManagedKey => ({ ...keyView(key), accountId: key.accountId, managedBy: key.managedBy as ManagedBy });
  const findKey = async (namespace: string, name: string): Promise<ApiKey> => {
    const key = await store.findKeyByManagedBy(ref('ApiKey', namespace, name));
    if (!key) throw new NotFound(`No API key is managed by ApiKey ${namespace}/${name}`);
    return key;
  };

  return {
    async accountExists(accountId: string) {
      const account = await store.getAccount(accountId);
      if (!account) throw new NotFound(`Account ${accountId} not found`);
      return { id: account.id, name: account.name };
    },
    async getSite(namespace: string, name: string): Promise<ManagedSite> {
      const site = await store.findSiteByManagedBy(ref('Site', namespace, name));
      if (!site) throw new NotFound(`No site is managed by Site ${namespace}/${name}`);
      return managedSite(site);
    },
    async putSite(namespace: string, name: string, input: PutManagedSite): Promise<{ site: ManagedSite; created: boolean }> {
      const allowedDomains = normalizeAllowedDomains(input.allowedDomains);
      const existed = (await store.findSiteByManagedBy(ref('Site', namespace, name))) !== null;
      const site = await store.upsertManagedSite({
        accountId: input.accountId,
        name: input.name,
        allowedDomains,
        managedBy: { kind: 'Site', namespace, name, uid: input.uid },
      });
      return { site: managedSite(site), created: !existed };
    },
    /** Idempotent: the id of the deleted site (with the keys scoped to it), or null when there was none. */
    async deleteSite(namespace: string, name: string): Promise<string | null> {
      const site = await store.findSiteByManagedBy(ref('Site', namespace, name));
      if (!site) return null;
      await store.deleteSite(site.id);
      return site.id;
    },
    async getKey(namespace: string, name: string): Promise<ManagedKey> {
      return managedKey(await findKey(namespace, name));
    },
    async putKey(namespace: string, name: string, input: PutManagedKey): Promise<PutManagedKeyAnswer> {
      const { key, secret, signingSecret } = await store.upsertManagedKey({
        accountId: input.accountId,
        name: input.name,
        kind: input.siteId === null ? 'full' : 'site',
        siteId: input.siteId,
        restrictDomains: input.restrictDomains,
        managedBy: { kind: 'ApiKey', namespace, name, uid: input.uid },
      });
      return { ...managedKey(key), key: secret, signingSecret };
    },
    async regenerateKey(namespace: string, name: string): Promise<IssuedManagedKey> {
      const regenerated = await store.regenerateKey((await findKey(namespace, name)).id);
      if (!regenerated) throw new NotFound(`No API key is managed by ApiKey ${namespace}/${name}`);
      return { ...managedKey(regenerated.key), key: regenerated.secret, signingSecret: regenerated.signingSecret };
    },
    /** Whether `keyHash` (SHA-256 hex of a plaintext the operator holds) is the key's current hash. */
    async keyMatches(namespace: string, name: string, keyHash: string): Promise<boolean> {
      return hashesEqual((await findKey(namespace, name)).hash, keyHash);
    },
    async deleteKey(namespace: string, name: string): Promise<string | null> {
      const key = await store.findKeyByManagedBy(ref('ApiKey', namespace, name));
      if (!key) return null;
      await store.deleteKey(key.id);
      return key.id;
    },
  };
}

export type ManagedOperations = ReturnType<typeof managedOperations>;
