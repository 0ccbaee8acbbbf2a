import { Schema, type Connection } from 'mongoose';
import { pageResultsOf, type Monitor, type MonitorRun, type MonitorStore } from './monitors.ts';
import { monitorScope } from './monitors.ts';
import { backfill, isDuplicateKey, managedKey, oneWriteAtATime, ownedBy } from './mongo-compat.ts';
import { duplicateManagedBy, newId } from './rules.ts';
import type { ManagedByRef } from './store.ts';
import { applyPatch, duplicateName, specOf } from './sqlite-monitors.ts';

/**
 * Monitors and their runs in MongoDB: one document per monitor (its name unique per account and
 * scope by index) and one per run. Updates are read-modify-write guarded by the generation, so two
 * replicas' concurrent edits cannot interleave: the loser retries on the new document.
 */
type MonitorDoc = Omit<Monitor, 'id'> & { _id: string; scope: string; managedKey: string };
type RunDoc = Omit<MonitorRun, 'id'> & { _id: string };

const monitorSchema = new Schema<MonitorDoc>(
  {
    _id: String,
    accountId: { type: String, required: true },
    scope: { type: String, required: true },
    name: { type: String, required: true },
    siteId: { type: String, default: null },
    schedule: { type: String, required: true },
    timeZone: { type: String, required: true },
    suspend: { type: Boolean, required: true },
    historyLimit: { type: Number, required: true },
    compare: { type: Schema.Types.Mixed, required: true },
    pages: { type: Schema.Types.Mixed, required: true },
    managedBy: { type: Schema.Types.Mixed, default: null },
    managedKey: { type: String, required: true },
    baselines: { type: Schema.Types.Mixed, default: {} },
    generation: { type: Number, required: true },
    scheduleStartedAt: { type: Date, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  // Indexes are built after the managedKey backfill (mongoMonitorStore).
  { versionKey: false, minimize: false, autoIndex: false },
);
monitorSchema.index({ accountId: 1, scope: 1, name: 1 }, { unique: true });
// The operator's lookup by owner; one monitor per owner (an unmanaged monitor's key is its own id).
monitorSchema.index({ managedKey: 1 }, { unique: true, name: 'monitors_by_managed_key' });

const runSchema = new Schema<RunDoc>(
  {
    _id: String,
    monitorId: { type: String, required: true },
    trigger: { type: String, required: true },
    scheduledAt: { type: Date, required: true },
    startedAt: { type: Date, required: true },
    finishedAt: { type: Date, required: true },
    pages: { type: Schema.Types.Mixed, required: true },
  },
  { versionKey: false, minimize: false },
);
runSchema.index({ monitorId: 1, finishedAt: -1 });

export async function mongoMonitorStore(connection: Connection): Promise<MonitorStore> {
  const Monitors = connection.model<MonitorDoc>('Monitor', monitorSchema, 'monitors');
  const Runs = connection.model<RunDoc>('MonitorRun', runSchema, 'monitorRuns');
  await backfill(Monitors, 'managedKey', (doc) => managedKey(doc.managedBy, doc._id));
  await Promise.all([Monitors.createIndexes(), Runs.init()]);
  const get = async (id: string) => toMonitor(await Monitors.findById(id).lean<MonitorDoc>());
  const findByManagedBy = async (ref: ManagedByRef) =>
    toMonitor(await Monitors.findOne(ownedBy(ref)).lean<MonitorDoc>());

  const serially = oneWriteAtATime();
  /**
   * Writes `next` if the document is still at `current`'s generation; retries on a concurrent write.
   * Within this process, one at a time: FerretDB v1 does not apply the guard atomically.
   */
  const update = (id: string, change: (current: Monitor) => Monitor): Promise<Monitor | null> => serially(id, () => guardedUpdate(id, change));
  async function guardedUpdate(id: string, change: (current: Monitor) => Monitor): Promise<Monitor | null> {
    for (;;) {
      const current = await get(id);
      if (!current) return null;
      const next = change(current);
      const { id: _id, ...fields } = next;
      try {
        const written = await Monitors.findOneAndUpdate(
          { _id: id, generation: current.generation, updatedAt: current.updatedAt },
          { $set: { ...fields, scope: monitorScope(next) } },
          { returnDocument: 'after' },
        ).lean<MonitorDoc>();
        if (written) return toMonitor(written);
      } catch (err) {
        // MongoDB answers E11000; FerretDB v1 reports a unique index broken by an update as an
        // internal error, so the name is looked up to tell that case from any other failure.
        if (isDuplicateKey(err) || (await Monitors.exists({ accountId: next.accountId, scope: monitorScope(next), name: next.name, _id: { $ne: id } }))) {
          throw duplicateName(next.name);
        }
        throw err;
      }
    }
  }

  return {
    async createMonitor(input) {
      const { accountId, managedBy = null, ...spec } = input;
      const now = new Date();
      const id = newId('mon');
      try {
        const created = await Monitors.create({
          _id: id,
          accountId,
          scope: monitorScope({ accountId, managedBy }),
          ...specOf(spec),
          managedBy,
          managedKey: managedKey(managedBy, id),
          baselines: {},
          generation: 1,
          scheduleStartedAt: now,
          createdAt: now,
          updatedAt: now,
        });
        return toMonitor(created.toObject()) as Monitor;
      } catch (err) {
        if (isDuplicateKey(err)) throw managedBy && (await findByManagedBy(managedBy)) ? duplicateManagedBy(managedBy) : duplicateName(spec.name);
        throw err;
      }
    },
    getMonitor: get,
    findMonitorByManagedBy: findByManagedBy,
    listMonitors: async (accountId) => (await Monitors.find({ accountId }).sort({ createdAt: 1, _id: 1 }).lean<MonitorDoc[]>()).map((doc) => toMonitor(doc) as Monitor),
    listAllMonitors: async () => (await Monitors.find({}).sort({ createdAt: 1, _id: 1 }).lean<MonitorDoc[]>()).map((doc) => toMonitor(doc) as Monitor),
    updateMonitor: (id, patch) => update(id, (current) => applyPatch(current, patch, new Date())),
    setMonitorBaseline: (id, page, imageId) =>
      update(id, (current) => {
        const baselines = { ...current.baselines };
        if (imageId === null) delete baselines[page];
        else baselines[page] = imageId;
        // The generation guards the write; the spec's generation is not raised by a baseline.
        return { ...current, baselines, updatedAt: new Date() };
      }),
    async deleteMonitor(id) {
      const deleted = await Monitors.deleteOne({ _id: id });
      await Runs.deleteMany({ monitorId: id });
      return deleted.deletedCount > 0;
    },
    async recordMonitorRun({ id = newId('run'), ...input }) {
      try {
        await Runs.create({ _id: id, ...input });
        return { id, ...input };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        return toRun((await Runs.findById(id).lean<RunDoc>()) as RunDoc);
      }
    },
    listMonitorRuns: async (monitorId, limit) => (await Runs.find({ monitorId }).sort({ finishedAt: -1, _id: -1 }).limit(limit).lean<RunDoc[]>()).map(toRun),
    getMonitorRun: async (id) => {
      const doc = await Runs.findById(id).lean<RunDoc>();
      return doc ? toRun(doc) : null;
    },
    async deleteMonitorRuns(ids) {
      await Runs.deleteMany({ _id: { $in: ids } });
    },
  };
}

function toMonitor(doc: MonitorDoc | null): Monitor | null {
  if (!doc) return null;
  return {
    id: doc._id,
    accountId: doc.accountId,
    ...specOf(doc),
    managedBy: doc.managedBy ?? null,
    baselines: doc.baselines ?? {},
    generation: doc.generation,
    scheduleStartedAt: doc.scheduleStartedAt,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

function toRun(doc: RunDoc): MonitorRun {
  const { _id, monitorId, trigger, scheduledAt, startedAt, finishedAt, pages } = doc;
  return { id: _id, monitorId, trigger, scheduledAt, startedAt, finishedAt, pages: pageResultsOf(pages) };
}
