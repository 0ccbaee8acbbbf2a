import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS, type Job, type JobData, type JobState, type JobStore } from './jobs.ts';
import { newId } from './rules.ts';

/**
 * Jobs in the embedded store. Times are epoch milliseconds so that the claim compares numbers.
 * A claim is one UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING: SQLite runs it under its single
 * writer lock, so two processes on one DATA_DIR never take the same job. The table is created here,
 * idempotently, like the users', so that it arrives in an existing DATA_DIR without a migration.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  last_error TEXT,
  result TEXT,
  blob BLOB,
  idempotency_key TEXT,
  group_key TEXT,
  run_at INTEGER NOT NULL,
  locked_by TEXT,
  locked_until INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  expires_at INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS jobs_due ON jobs(state, type, run_at);
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs(owner_id, type, created_at);
CREATE INDEX IF NOT EXISTS jobs_last_start ON jobs(type, owner_id, started_at);
CREATE INDEX IF NOT EXISTS jobs_expiry ON jobs(expires_at) WHERE expires_at IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS jobs_by_idempotency_key ON jobs(owner_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
`;

/** Every column but the blob, which only getJobBlob reads. */
const COLUMNS =
  'id, type, owner_id, payload, state, attempts, max_attempts, last_error, result, idempotency_key, group_key, run_at, locked_by, locked_until, created_at, updated_at, started_at, finished_at, expires_at';

type Row = Record<string, SQLInputValue>;

export function sqliteJobStore(db: DatabaseSync, transaction: <T>(work: () => T) => T): JobStore {
  transaction(() => {
    db.exec(SCHEMA);
    // A DATA_DIR from before job groups: the column arrives empty (every old job is in no group).
    const columns = db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[];
    if (!columns.some((column) => column.name === 'group_key')) db.exec('ALTER TABLE jobs ADD COLUMN group_key TEXT');
  });
  const one = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).get(...params) as Row | undefined;
  const run = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).run(...params);
  const getJob = (id: string) => toJob(one(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`, id));
  const byKey = (ownerId: string, key: string) => toJob(one(`SELECT ${COLUMNS} FROM jobs WHERE owner_id = ? AND idempotency_key = ?`, ownerId, key));

  return {
    async enqueueJob(input) {
      return transaction(() => {
        const now = Date.now();
        const key = input.idempotencyKey ?? null;
        if (key !== null) {
          // A key older than the window is free again: the old job keeps its history, not the key.
          const cutoff = now - (input.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS);
          run('UPDATE jobs SET idempotency_key = NULL WHERE owner_id = ? AND idempotency_key = ? AND created_at <= ?', input.ownerId, key, cutoff);
          const existing = byKey(input.ownerId, key);
          if (existing) return { job: existing, created: false };
        }
        const id = newId('job');
        run(
          `INSERT INTO jobs (id, type, owner_id, payload, state, attempts, max_attempts, idempotency_key, group_key, run_at, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?, ?, ?)`,
          id,
          input.type,
          input.ownerId,
          JSON.stringify(input.payload),
          input.maxAttempts,
          key,
          input.group ?? null,
          input.runAt?.getTime() ?? now,
          now,
          now,
        );
        return { job: getJob(id) as Job, created: true };
      });
    },
    getJob: async (id) => getJob(id),
    findJobByIdempotencyKey: async (ownerId, key) => byKey(ownerId, key),

    async claimJob(types, workerId, leaseMs, options = {}) {
      if (types.length === 0) return null;
      const typeList = types.map(() => '?').join(', ');
      const excluded = options.excludeGroups ?? [];
      const groupFilter = excluded.length === 0 ? '' : `AND (group_key IS NULL OR group_key NOT IN (${excluded.map(() => '?').join(', ')}))`;
      const due = `type IN (${typeList}) AND ((state = 'queued' AND run_at <= ?) OR (state = 'running' AND locked_until < ?)) ${groupFilter}`;
      // Read the shares and take the job under one write lock, so that the rule sees every claim before it.
      return transaction(() => {
        const now = Date.now();
        const dueParams = (): SQLInputValue[] => [...types, now, now, ...excluded];
        const pick = one(
          `WITH due AS (SELECT type, owner_id, MIN(run_at) AS first_run FROM jobs WHERE ${due} GROUP BY type, owner_id),
                busy AS (SELECT type, owner_id, COUNT(*) AS n FROM jobs WHERE state = 'running' AND locked_until >= ? AND type IN (${typeList}) GROUP BY type, owner_id),
                busy_type AS (SELECT type, SUM(n) AS n FROM busy GROUP BY type)
           SELECT due.type AS type, due.owner_id AS owner_id FROM due
           LEFT JOIN busy_type ON busy_type.type = due.type
           LEFT JOIN busy ON busy.type = due.type AND busy.owner_id = due.owner_id
           ORDER BY COALESCE(busy_type.n, 0), COALESCE(busy.n, 0),
             COALESCE((SELECT MAX(started_at) FROM jobs served WHERE served.type = due.type AND served.owner_id = due.owner_id), 0),
             due.first_run, due.owner_id LIMIT 1`,
          ...dueParams(),
          now,
          ...types,
        );
        if (!pick) return null;
        const row = one(
          `UPDATE jobs SET state = 'running', locked_by = ?, locked_until = ?, attempts = attempts + 1, started_at = ?, updated_at = ?
           WHERE id = (SELECT id FROM jobs WHERE type = ? AND owner_id = ? AND ${due} ORDER BY run_at, created_at LIMIT 1)
           RETURNING ${COLUMNS}`,
          workerId,
          now + leaseMs,
          now,
          now,
          pick.type as string,
          pick.owner_id as string,
          ...dueParams(),
        );
        return toJob(row);
      });
    },
    async renewJobLease(id, workerId, leaseMs) {
      const now = Date.now();
      return run("UPDATE jobs SET locked_until = ?, updated_at = ? WHERE id = ? AND state = 'running' AND locked_by = ?", now + leaseMs, now, id, workerId).changes > 0;
    },
    async completeJob(id, workerId, outcome) {
      const now = Date.now();
      return (
        run(
          `UPDATE jobs SET state = 'succeeded', result = ?, blob = ?, payload = COALESCE(?, payload), locked_by = NULL, locked_until = NULL, finished_at = ?, updated_at = ?, expires_at = ?
           WHERE id = ? AND state = 'running' AND locked_by = ?`,
          outcome.result === null ? null : JSON.stringify(outcome.result),
          outcome.blob ?? null,
          outcome.payload ? JSON.stringify(outcome.payload) : null,
          now,
          now,
          outcome.expiresAt.getTime(),
          id,
          workerId,
        ).changes > 0
      );
    },
    async failJob(id, workerId, error, next) {
      const now = Date.now();
      const retry = 'retryAt' in next;
      return (
        run(
          `UPDATE jobs SET state = ?, last_error = ?, payload = COALESCE(?, payload), run_at = ?, locked_by = NULL, locked_until = NULL, finished_at = ?, updated_at = ?, expires_at = ?
           WHERE id = ? AND state = 'running' AND locked_by = ?`,
          retry ? 'queued' : 'failed',
          error,
          !retry && next.payload ? JSON.stringify(next.payload) : null,
          retry ? next.retryAt.getTime() : now,
          retry ? null : now,
          now,
          retry ? null : next.expiresAt.getTime(),
          id,
          workerId,
        ).changes > 0
      );
    },
    async getJobBlob(id) {
      const row = one('SELECT blob FROM jobs WHERE id = ?', id);
      return row?.blob instanceof Uint8Array ? Buffer.from(row.blob) : null;
    },
    async countJobs(filter) {
      if (filter.states.length === 0) return 0;
      const where = [`state IN (${filter.states.map(() => '?').join(', ')})`];
      const params: SQLInputValue[] = [...filter.states];
      if (filter.ownerId !== undefined) {
        where.push('owner_id = ?');
        params.push(filter.ownerId);
      }
      if (filter.type !== undefined) {
        where.push('type = ?');
        params.push(filter.type);
      }
      return Number(one(`SELECT COUNT(*) AS n FROM jobs WHERE ${where.join(' AND ')}`, ...params)?.n ?? 0);
    },
    async listJobs(ownerId, type, limit) {
      const rows = db.prepare(`SELECT ${COLUMNS} FROM jobs WHERE owner_id = ? AND type = ? ORDER BY created_at DESC, id DESC LIMIT ?`).all(ownerId, type, limit) as Row[];
      return rows.map((row) => toJob(row) as Job);
    },
    async deleteExpiredJobs(now) {
      return Number(run('DELETE FROM jobs WHERE expires_at IS NOT NULL AND expires_at <= ?', now.getTime()).changes);
    },
  };
}

const date = (value: SQLInputValue | undefined) => (value === null || value === undefined ? null : new Date(Number(value)));
const json = (value: SQLInputValue | undefined) => (value === null || value === undefined ? null : (JSON.parse(String(value)) as JobData));

function toJob(row: Row | undefined): Job | null {
  if (row === undefined) return null;
  return {
    id: String(row.id),
    type: String(row.type),
    ownerId: String(row.owner_id),
    payload: json(row.payload) ?? {},
    state: row.state as JobState,
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    lastError: row.last_error === null ? null : String(row.last_error),
    result: json(row.result),
    idempotencyKey: row.idempotency_key === null ? null : String(row.idempotency_key),
    group: row.group_key === null || row.group_key === undefined ? null : String(row.group_key),
    runAt: date(row.run_at) as Date,
    lockedBy: row.locked_by === null ? null : String(row.locked_by),
    lockedUntil: date(row.locked_until),
    createdAt: date(row.created_at) as Date,
    updatedAt: date(row.updated_at) as Date,
    startedAt: date(row.started_at),
    finishedAt: date(row.finished_at),
    expiresAt: date(row.expires_at),
  };
}
