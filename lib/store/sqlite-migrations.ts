import type { DatabaseSync } from 'node:sqlite';

/**
 * SQLite cannot alter a CHECK constraint, so a table whose stored definition lacks `marker` (a
 * value the constraint must now allow) is rebuilt from `schema`'s CREATE TABLE for it, rows and all;
 * `schema` is run again for its indexes. Call it inside the opening transaction: every process on
 * the file sees either the old table or the new one.
 */
export function widenCheck(db: DatabaseSync, table: string, marker: string, schema: string): void {
  const stored = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string } | undefined;
  if (!stored || stored.sql.includes(marker)) return;
  const create = new RegExp(`CREATE TABLE IF NOT EXISTS ${table} \\([\\s\\S]*?\\) STRICT;`).exec(schema)?.[0];
  if (!create) throw new Error(`No CREATE TABLE for ${table} in the schema`);
  const next = `${table}_next`;
  db.exec(create.replace(`EXISTS ${table} (`, `EXISTS ${next} (`));
  db.exec(`INSERT INTO ${next} SELECT * FROM ${table}`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`ALTER TABLE ${next} RENAME TO ${table}`);
  db.exec(schema);
}
