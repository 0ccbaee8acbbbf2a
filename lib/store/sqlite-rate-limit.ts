import type { DatabaseSync } from 'node:sqlite';
import { RateLimiterSQLite } from 'rate-limiter-flexible';
import { rateLimitCounter, type ConsumeRateLimit } from './rate-limit-counter.ts';

/**
 * Rate-limit counters in the embedded store's own file, so that API processes sharing a DATA_DIR
 * share their limits. rate-limiter-flexible's SQLite limiter counts with one atomic
 * INSERT … ON CONFLICT DO UPDATE … RETURNING; it speaks better-sqlite3, whose prepare/get/run
 * node:sqlite shares, so a two-line adapter is all it needs (a single statement needs no
 * transaction wrapper). The table is its own, created here, outside the store's schema versions.
 */
const TABLE = 'rate_limits';

export function sqliteRateLimitCounter(db: DatabaseSync): ConsumeRateLimit {
  db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)`);
  const client = {
    prepare: (sql: string) => db.prepare(sql),
    transaction:
      <T>(work: () => T) =>
      () =>
        work(),
  };
  return rateLimitCounter((options) => new RateLimiterSQLite({ ...options, storeClient: client, storeType: 'better-sqlite3', tableName: TABLE, tableCreated: true }));
}
