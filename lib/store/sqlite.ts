import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { generateApiKey, generateSigningSecret } from '../api-keys.ts';
import { NotFound } from '../errors.ts';
import { assertSameAccount, duplicateManagedBy, newId, placeKey, usageScopes } from './rules.ts';
import { widenCheck } from './sqlite-migrations.ts';
import { sqliteUsageHistory } from './sqlite-usage-history.ts';
import { sqliteUserStore } from './sqlite-users.ts';
import { sqliteRateLimitCounter } from './sqlite-rate-limit.ts';
import { sqliteJobStore } from './sqlite-jobs.ts';
import { secretSealer, type SecretKeys } from './secret-sealing.ts';
import { sqliteMonitorStore } from './sqlite-monitors.ts';
import { sqliteDestinationStore } from './sqlite-destinations.ts';
import type {
  Account,
  ApiKey,
  IssuedKey,
  KeyKind,
  ManagedBy,
  ManagedByRef,
  NewAccount,
  NewKey,
  NewSite,
  Site,
  SitePatch,
  Store,
  UsageEvent,
  UsageRow,
} from './store.ts';

/**
 * The embedded store: Node's built-in SQLite in one file under DATA_DIR. WAL lets the API and the
 * operator read and write the same file from two processes; busy_timeout makes a writer wait for
 * the other one instead of failing; synchronous=FULL makes every commit durable before it returns,
 * so a crash loses nothing that was committed. Multi-step writes run in one IMMEDIATE transaction.
 */
export const SQLITE_FILE = 'viewfinder.db';

export interface SqliteOptions {
  dataDir: string;
  busyTimeoutMs?: number;
  /** SIGNING_SECRETS_KEY and the previous ones: signing secrets are sealed with them (secret-sealing.ts). */
  secretKeys?: SecretKeys;
}

const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  rate_limit_per_minute INTEGER,
  created_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS sites (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  allowed_domains TEXT NOT NULL,
  managed_kind TEXT, managed_namespace TEXT, managed_name TEXT, managed_uid TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS sites_by_account ON sites(account_id);
CREATE UNIQUE INDEX IF NOT EXISTS sites_by_managed_by ON sites(managed_kind, managed_namespace, managed_name)
  WHERE managed_name IS NOT NULL;
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('full', 'site')),
  site_id TEXT REFERENCES sites(id) ON DELETE CASCADE,
  restrict_domains INTEGER NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  managed_kind TEXT, managed_namespace TEXT, managed_name TEXT, managed_uid TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  CHECK ((kind = 'site') = (site_id IS NOT NULL))
) STRICT;
CREATE INDEX IF NOT EXISTS api_keys_by_account ON api_keys(account_id);
CREATE INDEX IF NOT EXISTS api_keys_by_site ON api_keys(site_id);
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_by_managed_by ON api_keys(managed_kind, managed_namespace, managed_name)
  WHERE managed_name IS NOT NULL;
CREATE TABLE IF NOT EXISTS usage (
  scope TEXT NOT NULL CHECK (scope IN ('site', 'key', 'monitor')),
  id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  captures INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, id)
) STRICT;
CREATE INDEX IF NOT EXISTS usage_by_account ON usage(account_id);
`;

type Row = Record<string, SQLInputValue>;

export function openSqliteStore(options: SqliteOptions): Store {
  const sealer = secretSealer(options.secretKeys);
  mkdirSync(options.dataDir, { recursive: true });
  const db = new DatabaseSync(path.join(options.dataDir, SQLITE_FILE), {
    timeout: options.busyTimeoutMs ?? 5000,
    enableForeignKeyConstraints: true,
  });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');

  /** BEGIN IMMEDIATE takes the write lock up front, so two processes never deadlock upgrading a read. */
  const transaction = <T>(work: () => T): T => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  };

  transaction(() => {
    const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (version < SCHEMA_VERSION) {
      db.exec(SCHEMA);
      db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    }
    widenCheck(db, 'usage', "'monitor'", SCHEMA);
    addKeyColumns(db);
  });

  const one = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).get(...params) as Row | undefined;
  const all = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).all(...params) as Row[];
  const run = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).run(...params);

  const getSite = (id: string) => mapOptional(one('SELECT * FROM sites WHERE id = ?', id), toSite);
  const getKey = (id: string) => mapOptional(one('SELECT * FROM api_keys WHERE id = ?', id), toKey);
  const siteByManagedBy = (ref: ManagedByRef) =>
    mapOptional(
      one('SELECT * FROM sites WHERE managed_kind = ? AND managed_namespace = ? AND managed_name = ?', ref.kind, ref.namespace, ref.name),
      toSite,
    );
  const keyByManagedBy = (ref: ManagedByRef) =>
    mapOptional(
      one('SELECT * FROM api_keys WHERE managed_kind = ? AND managed_namespace = ? AND managed_name = ?', ref.kind, ref.namespace, ref.name),
      toKey,
    );
  const requireAccount = (id: string) => {
    if (!one('SELECT 1 FROM accounts WHERE id = ?', id)) throw new NotFound(`Account ${id} not found`);
  };

  const insertSite = (input: NewSite): Site => {
    requireAccount(input.accountId);
    if (input.managedBy && siteByManagedBy(input.managedBy)) throw duplicateManagedBy(input.managedBy);
    const now = new Date().toISOString();
    const id = newId('site');
    run(
      `INSERT INTO sites (id, account_id, name, allowed_domains, managed_kind, managed_namespace, managed_name, managed_uid, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      input.accountId,
      input.name,
      JSON.stringify(input.allowedDomains),
      ...managedColumns(input.managedBy),
      now,
      now,
    );
    return getSite(id) as Site;
  };

  const insertKey = (input: NewKey): IssuedKey => {
    requireAccount(input.accountId);
    const placement = placeKey(input, input.siteId ? getSite(input.siteId) : null);
    if (input.managedBy && keyByManagedBy(input.managedBy)) throw duplicateManagedBy(input.managedBy);
    const generated = generateApiKey();
    const signingSecret = generateSigningSecret();
    const id = newId('key');
    run(
      `INSERT INTO api_keys (id, account_id, name, kind, site_id, restrict_domains, hash, prefix,
         managed_kind, managed_namespace, managed_name, managed_uid, created_at, last_used_at, signing_secret, unsigned_links)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
      id,
      input.accountId,
      input.name,
      input.kind,
      placement.siteId,
      placement.restrictDomains ? 1 : 0,
      generated.hash,
      generated.prefix,
      ...managedColumns(input.managedBy),
      new Date().toISOString(),
      sealer.seal(signingSecret),
      placement.unsignedLinks ? 1 : 0,
    );
    return { key: getKey(id) as ApiKey, secret: generated.secret, signingSecret };
  };

  const usageHistory = sqliteUsageHistory(db, transaction);
  const { resealDestinationCredentials, ...destinations } = sqliteDestinationStore(db, transaction, options.secretKeys);

  return {
    backend: 'sqlite',
    ...sqliteUserStore(db, transaction),
    ...usageHistory,
    consumeRateLimit: sqliteRateLimitCounter(db),
    ...sqliteJobStore(db, transaction),
    ...sqliteMonitorStore(db, transaction),
    ...destinations,

    async createAccount(input: NewAccount) {
      const id = newId('acct');
      run('INSERT INTO accounts (id, name, rate_limit_per_minute, created_at) VALUES (?, ?, ?, ?)', id, input.name, input.rateLimitPerMinute ?? null, new Date().toISOString());
      return mapOptional(one('SELECT * FROM accounts WHERE id = ?', id), toAccount) as Account;
    },
    async getAccount(id) {
      return mapOptional(one('SELECT * FROM accounts WHERE id = ?', id), toAccount);
    },
    async listAccounts() {
      return all('SELECT * FROM accounts ORDER BY created_at, id').map(toAccount);
    },
    async setAccountRateLimit(id, perMinute) {
      run('UPDATE accounts SET rate_limit_per_minute = ? WHERE id = ?', perMinute, id);
      return mapOptional(one('SELECT * FROM accounts WHERE id = ?', id), toAccount);
    },

    async createSite(input) {
      return transaction(() => insertSite(input));
    },
    getSite: async (id) => getSite(id),
    async listSites(accountId) {
      return all('SELECT * FROM sites WHERE account_id = ? ORDER BY created_at, id', accountId).map(toSite);
    },
    async updateSite(id, patch: SitePatch) {
      return transaction(() => {
        const site = getSite(id);
        if (!site) return null;
        run(
          'UPDATE sites SET name = ?, allowed_domains = ?, updated_at = ? WHERE id = ?',
          patch.name ?? site.name,
          JSON.stringify(patch.allowedDomains ?? site.allowedDomains),
          new Date().toISOString(),
          id,
        );
        return getSite(id);
      });
    },
    async deleteSite(id) {
      // ON DELETE CASCADE removes the site's keys in the same statement.
      return run('DELETE FROM sites WHERE id = ?', id).changes > 0;
    },
    async upsertManagedSite(input) {
      return transaction(() => {
        const existing = siteByManagedBy(input.managedBy);
        if (!existing) return insertSite(input);
        assertSameAccount(existing.accountId, input.accountId, input.managedBy);
        run(
          'UPDATE sites SET name = ?, allowed_domains = ?, managed_uid = ?, updated_at = ? WHERE id = ?',
          input.name,
          JSON.stringify(input.allowedDomains),
          input.managedBy.uid,
          new Date().toISOString(),
          existing.id,
        );
        return getSite(existing.id) as Site;
      });
    },
    findSiteByManagedBy: async (ref) => siteByManagedBy(ref),

    async createKey(input) {
      return transaction(() => insertKey(input));
    },
    getKey: async (id) => getKey(id),
    async listKeys(accountId) {
      return all('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id', accountId).map(toKey);
    },
    async findKeyByHash(hash) {
      return mapOptional(one('SELECT * FROM api_keys WHERE hash = ?', hash), toKey);
    },
    async regenerateKey(id) {
      const generated = generateApiKey();
      const signingSecret = generateSigningSecret();
      // One UPDATE: the old hash and signing secret are gone in the very write that stores the new ones.
      const changed = run('UPDATE api_keys SET hash = ?, prefix = ?, signing_secret = ? WHERE id = ?', generated.hash, generated.prefix, sealer.seal(signingSecret), id).changes;
      if (changed === 0) return null;
      return { key: getKey(id) as ApiKey, secret: generated.secret, signingSecret };
    },
    async deleteKey(id) {
      return run('DELETE FROM api_keys WHERE id = ?', id).changes > 0;
    },
    async upsertManagedKey(input) {
      return transaction(() => {
        const existing = keyByManagedBy(input.managedBy);
        if (!existing) return insertKey(input);
        assertSameAccount(existing.accountId, input.accountId, input.managedBy);
        const placement = placeKey(input, input.siteId ? getSite(input.siteId) : null);
        run(
          'UPDATE api_keys SET name = ?, kind = ?, site_id = ?, restrict_domains = ?, managed_uid = ? WHERE id = ?',
          input.name,
          input.kind,
          placement.siteId,
          placement.restrictDomains ? 1 : 0,
          input.managedBy.uid,
          existing.id,
        );
        return { key: getKey(existing.id) as ApiKey, secret: null, signingSecret: null };
      });
    },
    findKeyByManagedBy: async (ref) => keyByManagedBy(ref),
    async getSigningSecret(id) {
      const row = one('SELECT signing_secret FROM api_keys WHERE id = ?', id);
      return typeof row?.signing_secret === 'string' ? sealer.open(row.signing_secret) : null;
    },
    async resealSigningSecrets() {
      return transaction(() => {
        const rows = db.prepare('SELECT id, signing_secret FROM api_keys WHERE signing_secret IS NOT NULL').all() as { id: string; signing_secret: string }[];
        const stale = rows.filter((row) => !sealer.isCurrent(row.signing_secret));
        for (const row of stale) run('UPDATE api_keys SET signing_secret = ? WHERE id = ?', sealer.seal(sealer.open(row.signing_secret)), row.id);
        return stale.length + resealDestinationCredentials();
      });
    },
    async touchKey(id, at) {
      run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', at.toISOString(), id);
    },

    async recordUsage(event: UsageEvent) {
      const captures = event.outcome === 'capture' ? 1 : 0;
      const failures = event.outcome === 'failure' ? 1 : 0;
      transaction(() => {
        for (const [scope, id] of usageScopes(event)) {
          run(
            `INSERT INTO usage (scope, id, account_id, captures, failures, bytes) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (scope, id) DO UPDATE SET captures = captures + excluded.captures,
               failures = failures + excluded.failures, bytes = bytes + excluded.bytes`,
            scope,
            id,
            event.accountId,
            captures,
            failures,
            event.bytes,
          );
        }
        usageHistory.recordDay(event);
      });
    },
    async listUsage(accountId) {
      return all('SELECT * FROM usage WHERE account_id = ? ORDER BY scope, id', accountId).map(
        (row): UsageRow => ({
          scope: row.scope as UsageRow['scope'],
          id: String(row.id),
          captures: Number(row.captures),
          failures: Number(row.failures),
          bytes: Number(row.bytes),
        }),
      );
    },

    async close() {
      if (db.isOpen) db.close();
    },
  };
}

/**
 * Columns that keys gained after the first schema, added where they are missing whatever the
 * schema version, so each change stays independent of other additions. Older keys have no signing
 * secret until they are regenerated, and do not allow unsigned render links.
 */
const LATER_KEY_COLUMNS = [
  ['signing_secret', 'TEXT'],
  ['unsigned_links', 'INTEGER NOT NULL DEFAULT 0'],
] as const;

function addKeyColumns(db: DatabaseSync): void {
  const columns = new Set((db.prepare('PRAGMA table_info(api_keys)').all() as Array<{ name: string }>).map((column) => column.name));
  for (const [name, type] of LATER_KEY_COLUMNS) {
    if (!columns.has(name)) db.exec(`ALTER TABLE api_keys ADD COLUMN ${name} ${type}`);
  }
}

function mapOptional<T>(row: Row | undefined, map: (row: Row) => T): T | null {
  return row === undefined ? null : map(row);
}

function managedColumns(managedBy: ManagedBy | null | undefined): SQLInputValue[] {
  return managedBy ? [managedBy.kind, managedBy.namespace, managedBy.name, managedBy.uid] : [null, null, null, null];
}

function toManagedBy(row: Row): ManagedBy | null {
  if (row.managed_name === null || row.managed_name === undefined) return null;
  return {
    kind: row.managed_kind as ManagedBy['kind'],
    namespace: String(row.managed_namespace),
    name: String(row.managed_name),
    uid: String(row.managed_uid),
  };
}

function toAccount(row: Row): Account {
  return {
    id: String(row.id),
    name: String(row.name),
    rateLimitPerMinute: row.rate_limit_per_minute === null ? null : Number(row.rate_limit_per_minute),
    createdAt: new Date(String(row.created_at)),
  };
}

function toSite(row: Row): Site {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    name: String(row.name),
    allowedDomains: JSON.parse(String(row.allowed_domains)) as string[],
    managedBy: toManagedBy(row),
    createdAt: new Date(String(row.created_at)),
    updatedAt: new Date(String(row.updated_at)),
  };
}

function toKey(row: Row): ApiKey {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    name: String(row.name),
    kind: row.kind as KeyKind,
    siteId: row.site_id === null ? null : String(row.site_id),
    restrictDomains: row.restrict_domains === 1,
    unsignedLinks: row.unsigned_links === 1,
    hash: String(row.hash),
    prefix: String(row.prefix),
    managedBy: toManagedBy(row),
    createdAt: new Date(String(row.created_at)),
    lastUsedAt: row.last_used_at === null ? null : new Date(String(row.last_used_at)),
  };
}
