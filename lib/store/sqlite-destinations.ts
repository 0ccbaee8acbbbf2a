import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { NotFound } from '../errors.ts';
import { credentialSealer, duplicateDestination, type DestinationStore, type NewDestination, type StorageDestination } from './destinations.ts';
import { assertSameAccount, newId } from './rules.ts';
import type { SecretKeys } from './secret-sealing.ts';
import type { ManagedBy, ManagedByRef } from './store.ts';

/**
 * Storage destinations in the embedded store: one row each, the name unique per account, the
 * credentials one sealed column. The table is created here, idempotently, so that it arrives in an
 * existing DATA_DIR; it goes with its account.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS destinations (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  bucket TEXT NOT NULL,
  region TEXT NOT NULL,
  path_style INTEGER NOT NULL,
  key_template TEXT NOT NULL,
  credentials TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS destinations_by_name ON destinations(account_id, name);
`;

/** The owning Kubernetes Site (issue #43), added to a table made before it existed. */
const MANAGED_COLUMNS = ['managed_kind', 'managed_namespace', 'managed_name', 'managed_uid'];

type Row = Record<string, SQLInputValue>;

export function sqliteDestinationStore(
  db: DatabaseSync,
  transaction: <T>(work: () => T) => T,
  secretKeys: SecretKeys | undefined,
): DestinationStore & { resealDestinationCredentials(): number } {
  transaction(() => {
    db.exec(SCHEMA);
    const columns = new Set((db.prepare('PRAGMA table_info(destinations)').all() as Array<{ name: string }>).map((column) => column.name));
    for (const column of MANAGED_COLUMNS) if (!columns.has(column)) db.exec(`ALTER TABLE destinations ADD COLUMN ${column} TEXT`);
  });
  const sealer = credentialSealer(secretKeys);
  const one = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).get(...params) as Row | undefined;
  const run = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).run(...params);
  const get = (accountId: string, name: string) => {
    const row = one('SELECT * FROM destinations WHERE account_id = ? AND name = ?', accountId, name);
    return row ? toDestination(row) : null;
  };

  const byManagedBy = (ref: ManagedByRef) => {
    const row = one('SELECT * FROM destinations WHERE managed_kind = ? AND managed_namespace = ? AND managed_name = ?', ref.kind, ref.namespace, ref.name);
    return row ? toDestination(row) : null;
  };
  const insert = (input: NewDestination) => {
    if (!one('SELECT 1 FROM accounts WHERE id = ?', input.accountId)) throw new NotFound(`Account ${input.accountId} not found`);
    if (get(input.accountId, input.name)) throw duplicateDestination(input.name);
    const now = new Date().toISOString();
    const owner = input.managedBy;
    run(
      `INSERT INTO destinations (id, account_id, name, endpoint, bucket, region, path_style, key_template, credentials, created_at, updated_at,
         managed_kind, managed_namespace, managed_name, managed_uid)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      newId('dest'),
      input.accountId,
      input.name,
      input.endpoint,
      input.bucket,
      input.region,
      input.pathStyle ? 1 : 0,
      input.keyTemplate,
      sealer.seal(input.credentials),
      now,
      now,
      ...(owner ? [owner.kind, owner.namespace, owner.name, owner.uid] : [null, null, null, null]),
    );
    return get(input.accountId, input.name) as StorageDestination;
  };

  return {
    async createDestination(input) {
      return transaction(() => insert(input));
    },
    findDestinationByManagedBy: async (ref) => byManagedBy(ref),
    async upsertManagedDestination(input) {
      return transaction(() => {
        const existing = byManagedBy(input.managedBy);
        if (!existing) return insert(input);
        assertSameAccount(existing.accountId, input.accountId, input.managedBy);
        // A new name (the Site's spec.storage.name changed) must not take another destination's.
        if (existing.name !== input.name && get(input.accountId, input.name)) throw duplicateDestination(input.name);
        run(
          `UPDATE destinations SET name = ?, endpoint = ?, bucket = ?, region = ?, path_style = ?, key_template = ?, credentials = ?, managed_uid = ?, updated_at = ?
           WHERE id = ?`,
          input.name,
          input.endpoint,
          input.bucket,
          input.region,
          input.pathStyle ? 1 : 0,
          input.keyTemplate,
          sealer.seal(input.credentials),
          input.managedBy.uid,
          new Date().toISOString(),
          existing.id,
        );
        return get(input.accountId, input.name) as StorageDestination;
      });
    },
    getDestination: async (accountId, name) => get(accountId, name),
    async listDestinations(accountId) {
      return (db.prepare('SELECT * FROM destinations WHERE account_id = ? ORDER BY name').all(accountId) as Row[]).map(toDestination);
    },
    async updateDestination(accountId, name, patch) {
      return transaction(() => {
        const current = get(accountId, name);
        if (!current) return null;
        const next = { ...current, ...patch };
        run(
          'UPDATE destinations SET endpoint = ?, bucket = ?, region = ?, path_style = ?, key_template = ?, updated_at = ? WHERE id = ?',
          next.endpoint,
          next.bucket,
          next.region,
          next.pathStyle ? 1 : 0,
          next.keyTemplate,
          new Date().toISOString(),
          current.id,
        );
        if (patch.credentials) run('UPDATE destinations SET credentials = ? WHERE id = ?', sealer.seal(patch.credentials), current.id);
        return get(accountId, name);
      });
    },
    async deleteDestination(accountId, name) {
      return run('DELETE FROM destinations WHERE account_id = ? AND name = ?', accountId, name).changes > 0;
    },
    async getDestinationCredentials(accountId, name) {
      const row = one('SELECT credentials FROM destinations WHERE account_id = ? AND name = ?', accountId, name);
      return row ? sealer.open(String(row.credentials)) : null;
    },
    /** Inside Store.resealSigningSecrets: one rotation of SIGNING_SECRETS_KEY moves every sealed value. */
    resealDestinationCredentials() {
      const rows = db.prepare('SELECT id, credentials FROM destinations').all() as { id: string; credentials: string }[];
      const stale = rows.filter((row) => !sealer.isCurrent(row.credentials));
      for (const row of stale) run('UPDATE destinations SET credentials = ? WHERE id = ?', sealer.reseal(row.credentials), row.id);
      return stale.length;
    },
  };
}

function toDestination(row: Row): StorageDestination {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    name: String(row.name),
    endpoint: String(row.endpoint),
    bucket: String(row.bucket),
    region: String(row.region),
    pathStyle: row.path_style === 1,
    keyTemplate: String(row.key_template),
    managedBy:
      row.managed_name === null || row.managed_name === undefined
        ? null
        : { kind: row.managed_kind as ManagedBy['kind'], namespace: String(row.managed_namespace), name: String(row.managed_name), uid: String(row.managed_uid) },
    createdAt: new Date(String(row.created_at)),
    updatedAt: new Date(String(row.updated_at)),
  };
}
