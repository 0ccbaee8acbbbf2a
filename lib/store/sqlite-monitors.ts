import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { Conflict } from '../errors.ts';
import type { ManagedByRef } from './store.ts';
import { monitorScope, pageResultsOf, type Monitor, type MonitorRun, type MonitorSpec, type MonitorStore } from './monitors.ts';
import { duplicateManagedBy, newId } from './rules.ts';

/**
 * Monitors and their runs in the embedded store. A monitor's spec, baselines and managedBy are one
 * JSON column (the store never queries inside them); its name is unique per account and scope. The
 * tables are created here, idempotently, so that they arrive in an existing DATA_DIR.
 */
/** The owner's identity inside the JSON column; an expression index makes the operator's lookup one seek. */
const MANAGED_BY = ["data ->> '$.managedBy.kind'", "data ->> '$.managedBy.namespace'", "data ->> '$.managedBy.name'"] as const;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS monitors (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  name TEXT NOT NULL,
  data TEXT NOT NULL,
  generation INTEGER NOT NULL,
  schedule_started_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS monitors_by_name ON monitors(account_id, scope, name);
CREATE UNIQUE INDEX IF NOT EXISTS monitors_by_managed_by ON monitors(${MANAGED_BY.join(', ')}) WHERE ${MANAGED_BY[2]} IS NOT NULL;
CREATE TABLE IF NOT EXISTS monitor_runs (
  id TEXT PRIMARY KEY,
  monitor_id TEXT NOT NULL,
  data TEXT NOT NULL,
  finished_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS monitor_runs_by_monitor ON monitor_runs(monitor_id, finished_at);
`;

type Row = Record<string, SQLInputValue>;
type MonitorData = MonitorSpec & Pick<Monitor, 'managedBy' | 'baselines'>;

export function sqliteMonitorStore(db: DatabaseSync, transaction: <T>(work: () => T) => T): MonitorStore {
  transaction(() => db.exec(SCHEMA));
  const one = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).get(...params) as Row | undefined;
  const all = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).all(...params) as Row[];
  const run = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).run(...params);
  const get = (id: string) => toMonitor(one('SELECT * FROM monitors WHERE id = ?', id));
  const taken = (accountId: string, scope: string, name: string, except = '') =>
    one('SELECT 1 FROM monitors WHERE account_id = ? AND scope = ? AND name = ? AND id != ?', accountId, scope, name, except) !== undefined;

  const byManagedBy = (ref: ManagedByRef) =>
    toMonitor(one(`SELECT * FROM monitors WHERE ${MANAGED_BY.map((column) => `${column} = ?`).join(' AND ')}`, ref.kind, ref.namespace, ref.name));

  const write = (monitor: Monitor) =>
    run(
      'UPDATE monitors SET name = ?, data = ?, generation = ?, schedule_started_at = ?, updated_at = ? WHERE id = ?',
      monitor.name,
      JSON.stringify(dataOf(monitor)),
      monitor.generation,
      monitor.scheduleStartedAt.getTime(),
      monitor.updatedAt.getTime(),
      monitor.id,
    );

  return {
    async createMonitor(input) {
      return transaction(() => {
        const { accountId, managedBy = null, ...spec } = input;
        const scope = monitorScope({ accountId, managedBy });
        if (taken(accountId, scope, spec.name)) throw duplicateName(spec.name);
        if (managedBy && byManagedBy(managedBy)) throw duplicateManagedBy(managedBy);
        const id = newId('mon');
        const now = Date.now();
        const data: MonitorData = { ...specOf(spec), managedBy, baselines: {} };
        run(
          'INSERT INTO monitors (id, account_id, scope, name, data, generation, schedule_started_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)',
          id,
          accountId,
          scope,
          spec.name,
          JSON.stringify(data),
          now,
          now,
          now,
        );
        return get(id) as Monitor;
      });
    },
    getMonitor: async (id) => get(id),
    listMonitors: async (accountId) => all('SELECT * FROM monitors WHERE account_id = ? ORDER BY created_at, id', accountId).map((row) => toMonitor(row) as Monitor),
    listAllMonitors: async () => all('SELECT * FROM monitors ORDER BY created_at, id').map((row) => toMonitor(row) as Monitor),
    findMonitorByManagedBy: async (ref) => byManagedBy(ref),
    async updateMonitor(id, patch) {
      return transaction(() => {
        const current = get(id);
        if (!current) return null;
        const next = applyPatch(current, patch, new Date());
        if (next.name !== current.name && taken(current.accountId, monitorScope(current), next.name, id)) throw duplicateName(next.name);
        write(next);
        return get(id);
      });
    },
    async setMonitorBaseline(id, page, imageId) {
      return transaction(() => {
        const current = get(id);
        if (!current) return null;
        const baselines = { ...current.baselines };
        if (imageId === null) delete baselines[page];
        else baselines[page] = imageId;
        write({ ...current, baselines });
        return get(id);
      });
    },
    async deleteMonitor(id) {
      return transaction(() => {
        run('DELETE FROM monitor_runs WHERE monitor_id = ?', id);
        return Number(run('DELETE FROM monitors WHERE id = ?', id).changes) > 0;
      });
    },
    async recordMonitorRun({ id = newId('run'), ...input }) {
      run('INSERT INTO monitor_runs (id, monitor_id, data, finished_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING', id, input.monitorId, JSON.stringify(input), input.finishedAt.getTime());
      return toRun(one('SELECT * FROM monitor_runs WHERE id = ?', id)) as MonitorRun;
    },
    listMonitorRuns: async (monitorId, limit) =>
      all('SELECT * FROM monitor_runs WHERE monitor_id = ? ORDER BY finished_at DESC, id DESC LIMIT ?', monitorId, limit).map((row) => toRun(row) as MonitorRun),
    getMonitorRun: async (id) => toRun(one('SELECT * FROM monitor_runs WHERE id = ?', id)),
    async deleteMonitorRuns(ids) {
      transaction(() => {
        for (const id of ids) run('DELETE FROM monitor_runs WHERE id = ?', id);
      });
    },
  };
}

/** The spec's fields only, in a fixed order. */
export function specOf(spec: MonitorSpec): MonitorSpec {
  const { name, siteId, schedule, timeZone, suspend, historyLimit, compare, pages } = spec;
  return { name, siteId, schedule, timeZone, suspend, historyLimit, compare, pages };
}

function dataOf(monitor: Monitor): MonitorData {
  return { ...specOf(monitor), managedBy: monitor.managedBy, baselines: monitor.baselines };
}

/** The rules of an update, shared by both backends: generation, schedule restart, baselines of dropped pages. */
export function applyPatch(current: Monitor, patch: Partial<MonitorSpec>, now: Date): Monitor {
  const next: Monitor = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)), generation: current.generation + 1, updatedAt: now };
  const restarted = next.schedule !== current.schedule || next.timeZone !== current.timeZone || (current.suspend && !next.suspend);
  if (restarted) next.scheduleStartedAt = now;
  const pages = new Set(next.pages.map((page) => page.name));
  next.baselines = Object.fromEntries(Object.entries(current.baselines).filter(([page]) => pages.has(page)));
  return next;
}

export function duplicateName(name: string): Conflict {
  return new Conflict(`A monitor named ${name} already exists`);
}

function toMonitor(row: Row | undefined): Monitor | null {
  if (!row) return null;
  const data = JSON.parse(row.data as string) as MonitorData;
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    ...specOf(data),
    managedBy: data.managedBy,
    baselines: data.baselines,
    generation: Number(row.generation),
    scheduleStartedAt: new Date(Number(row.schedule_started_at)),
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

function toRun(row: Row | undefined): MonitorRun | null {
  if (!row) return null;
  const data = JSON.parse(row.data as string) as Omit<MonitorRun, 'id'> & Record<'scheduledAt' | 'startedAt' | 'finishedAt', string>;
  return { ...data, pages: pageResultsOf(data.pages), id: row.id as string, scheduledAt: new Date(data.scheduledAt), startedAt: new Date(data.startedAt), finishedAt: new Date(data.finishedAt) };
}
