import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { usageScopes } from './rules.ts';
import { widenCheck } from './sqlite-migrations.ts';
import type { UsageEvent } from './store.ts';
import { utcDay, type UsageDayRow, type UsageHistoryStore } from './usage-history.ts';

/** Daily usage buckets in the embedded store; the table is created idempotently, like the users'. */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage_daily (
  day TEXT NOT NULL,
  scope TEXT NOT NULL CHECK (scope IN ('site', 'key', 'monitor')),
  id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  captures INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, scope, id)
) STRICT;
CREATE INDEX IF NOT EXISTS usage_daily_by_account ON usage_daily(account_id, day);
`;

export function sqliteUsageHistory(db: DatabaseSync, transaction: <T>(work: () => T) => T): UsageHistoryStore & { recordDay(event: UsageEvent): void } {
  transaction(() => {
    db.exec(SCHEMA);
    widenCheck(db, 'usage_daily', "'monitor'", SCHEMA);
  });
  const upsert = db.prepare(
    `INSERT INTO usage_daily (day, scope, id, account_id, captures, failures, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (day, scope, id) DO UPDATE SET captures = captures + excluded.captures,
       failures = failures + excluded.failures, bytes = bytes + excluded.bytes`,
  );
  return {
    /** Called inside recordUsage's transaction, so the day and the totals always agree. */
    recordDay(event) {
      const day = utcDay(new Date());
      const captures = event.outcome === 'capture' ? 1 : 0;
      const failures = event.outcome === 'failure' ? 1 : 0;
      for (const [scope, id] of usageScopes(event)) upsert.run(day, scope, id, event.accountId, captures, failures, event.bytes);
    },
    async listUsageHistory(accountId, sinceDay) {
      const rows = db.prepare('SELECT * FROM usage_daily WHERE account_id = ? AND day >= ? ORDER BY day, scope, id').all(accountId, sinceDay) as Record<string, SQLInputValue>[];
      return rows.map(
        (row): UsageDayRow => ({
          day: String(row.day),
          scope: row.scope as UsageDayRow['scope'],
          id: String(row.id),
          captures: Number(row.captures),
          failures: Number(row.failures),
          bytes: Number(row.bytes),
        }),
      );
    },
  };
}
