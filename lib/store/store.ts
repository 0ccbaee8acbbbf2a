/**
 * The store port: the one interface the hosted API, the admin CLI and the operator use, whichever
 * backend holds the data (sqlite.ts embedded, mongo.ts for MongoDB). test/store/ is its
 * conformance suite: anything a backend does must pass it on both.
 *
 * The store enforces identity and integrity (unique key hashes, unique managedBy identities,
 * keys removed with their site, atomic regeneration). Who may do what is decided above it
 * (lib/management.ts): the store never checks accounts against each other.
 */

import type { UsageHistoryStore } from './usage-history.ts';
import type { UserStore } from './users.ts';
import type { RateLimitState } from './rate-limit-counter.ts';
import type { JobStore } from './jobs.ts';
import type { MonitorStore } from './monitors.ts';
import type { DestinationStore } from './destinations.ts';

/** The Kubernetes object that owns a store object (issue 7's operator). Identity is kind/namespace/name. */
export interface ManagedBy {
  kind: 'Site' | 'ApiKey' | 'PageMonitor';
  namespace: string;
  name: string;
  /** Changes when the object is deleted and created again under the same name. */
  uid: string;
}

export type ManagedByRef = Pick<ManagedBy, 'kind' | 'namespace' | 'name'>;

export interface Account {
  id: string;
  name: string;
  /** Captures per minute per key; null means the service default (RATE_LIMIT_PER_MINUTE). */
  rateLimitPerMinute: number | null;
  createdAt: Date;
}

export interface Site {
  id: string;
  accountId: string;
  name: string;
  /** Normalized host names (lib/domains.ts); subdomains are always included. */
  allowedDomains: string[];
  managedBy: ManagedBy | null;
  createdAt: Date;
  updatedAt: Date;
}

export type KeyKind = 'full' | 'site';

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  kind: KeyKind;
  /** Set exactly when kind is 'site'. */
  siteId: string | null;
  /** Only for site keys: capture only the site's allowedDomains and their subdomains. */
  restrictDomains: boolean;
  /**
   * Only for site keys: GET /api/render also accepts this key itself in the query, unsigned
   * (docs/render-links.md). False by default: render links must then be signed.
   */
  unsignedLinks: boolean;
  /** SHA-256 of the key (hex). Never leaves the server. */
  hash: string;
  /** The first characters of the key, for display. */
  prefix: string;
  managedBy: ManagedBy | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** A key together with its plaintext and its signing secret, returned only by the calls that create one. */
export interface IssuedKey {
  key: ApiKey;
  secret: string;
  /** HMAC-SHA256 secret for signed render links and webhooks; see getSigningSecret. */
  signingSecret: string;
}

export interface Usage {
  captures: number;
  failures: number;
  /** Image bytes (PNG, JPEG or WebP) returned by successful captures. */
  bytes: number;
}

/** Who a usage row counts: a site, an API key (or the dashboard's Try it), or a page monitor, whose captures use no key. */
export type UsageScope = 'site' | 'key' | 'monitor';

export interface UsageRow extends Usage {
  scope: UsageScope;
  id: string;
}

export interface NewAccount {
  name: string;
  rateLimitPerMinute?: number | null;
}

export interface NewSite {
  accountId: string;
  name: string;
  allowedDomains: string[];
  managedBy?: ManagedBy | null;
}

export interface SitePatch {
  name?: string;
  allowedDomains?: string[];
}

export interface NewKey {
  accountId: string;
  name: string;
  kind: KeyKind;
  siteId?: string | null;
  restrictDomains?: boolean;
  unsignedLinks?: boolean;
  managedBy?: ManagedBy | null;
}

/**
 * One capture or failure. It counts for its site (a monitor with the account's full access has
 * none) and for what made it: an API key, or a page monitor. Every capture has exactly one key or
 * monitor, so the account's total is the sum over keys and monitors (usageScopes in rules.ts).
 */
export type UsageEvent = {
  accountId: string;
  siteId: string | null;
  outcome: 'capture' | 'failure';
  bytes: number;
} & ({ keyId: string; monitorId?: never } | { monitorId: string; keyId?: never });

export interface Store extends UserStore, UsageHistoryStore, JobStore, MonitorStore, DestinationStore {
  readonly backend: 'sqlite' | 'mongo';

  createAccount(input: NewAccount): Promise<Account>;
  getAccount(id: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  setAccountRateLimit(id: string, perMinute: number | null): Promise<Account | null>;

  createSite(input: NewSite): Promise<Site>;
  getSite(id: string): Promise<Site | null>;
  listSites(accountId: string): Promise<Site[]>;
  updateSite(id: string, patch: SitePatch): Promise<Site | null>;
  /** Deletes the site and every key scoped to it, together. False when there was no such site. */
  deleteSite(id: string): Promise<boolean>;
  /**
   * The operator's idempotent write: creates the site owned by `managedBy` (matched on
   * kind/namespace/name), or brings the existing one to these values. Never creates a second one.
   */
  upsertManagedSite(input: NewSite & { managedBy: ManagedBy }): Promise<Site>;
  findSiteByManagedBy(ref: ManagedByRef): Promise<Site | null>;

  /** Creates a key and returns its plaintext, once. */
  createKey(input: NewKey): Promise<IssuedKey>;
  getKey(id: string): Promise<ApiKey | null>;
  listKeys(accountId: string): Promise<ApiKey[]>;
  /** The key whose SHA-256 is `hash`, for authentication. */
  findKeyByHash(hash: string): Promise<ApiKey | null>;
  /**
   * Replaces the key's secret and its signing secret: the old ones stop working in the same write
   * that stores the new ones.
   */
  regenerateKey(id: string): Promise<IssuedKey | null>;
  deleteKey(id: string): Promise<boolean>;
  /**
   * The operator's idempotent write for a managed key: the existing key (matched on
   * kind/namespace/name) with secret and signingSecret null, or a new one with both when there was
   * none. Name, kind, site and restrictDomains are brought to the given values either way;
   * unsignedLinks is set only when the key is created.
   */
  upsertManagedKey(input: NewKey & { managedBy: ManagedBy }): Promise<{ key: ApiKey; secret: string | null; signingSecret: string | null }>;
  findKeyByManagedBy(ref: ManagedByRef): Promise<ApiKey | null>;
  /**
   * The key's signing secret, to check an HMAC made with it; null for no such key, or for a key
   * issued before signing secrets existed (regenerating it gives it one). Server-side only: never
   * logged, never in an answer other than the one that issues it.
   */
  getSigningSecret(id: string): Promise<string | null>;
  /**
   * Seals again, with the current SIGNING_SECRETS_KEY, every signing secret and every storage
   * destination's credentials stored plain or under a previous key (secret-sealing.ts); answers how many. The API runs it at start-up, so that a
   * rotation ends once every replica runs with the new key. Stored secrets are sealed at rest;
   * getSigningSecret opens them.
   */
  resealSigningSecrets(): Promise<number>;
  touchKey(id: string, at: Date): Promise<void>;

  /**
   * Takes one capture from a key's budget of `limit` per `windowSeconds`. The counter lives in the
   * store, so every process on it (API replicas) shares the same budget.
   */
  consumeRateLimit(key: string, limit: number, windowSeconds: number): Promise<RateLimitState>;

  recordUsage(event: UsageEvent): Promise<void>;
  /** Usage of every site and key of the account that has any. */
  listUsage(accountId: string): Promise<UsageRow[]>;

  close(): Promise<void>;
}
