import { Schema, type Connection, type QueryFilter } from 'mongoose';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS, type Job, type JobData, type JobState, type JobStore } from './jobs.ts';
import { newId } from './rules.ts';

/**
 * Jobs in MongoDB. A claim is one findOneAndUpdate on a single document, which MongoDB applies
 * atomically, so two replicas never take the same job. Idempotency keys are unique per owner
 * (a partial unique index): two concurrent submits with one key make one job, the loser reads it.
 * The blob is a field of its own, left out of every read but getJobBlob (a document holds at most
 * 16 MiB, which bounds one result).
 */
interface JobDoc {
  _id: string;
  type: string;
  ownerId: string;
  payload: JobData;
  state: JobState;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  result: JobData | null;
  blob?: Buffer | null;
  idempotencyKey?: string | null;
  group?: string | null;
  runAt: Date;
  lockedBy: string | null;
  lockedUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  expiresAt: Date | null;
}

const jobSchema = new Schema<JobDoc>(
  {
    _id: String,
    type: { type: String, required: true },
    ownerId: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, required: true },
    state: { type: String, required: true, enum: ['queued', 'running', 'succeeded', 'failed'] },
    attempts: { type: Number, default: 0 },
    maxAttempts: { type: Number, required: true },
    lastError: { type: String, default: null },
    result: { type: Schema.Types.Mixed, default: null },
    blob: { type: Buffer, default: undefined },
    idempotencyKey: { type: String, default: undefined },
    group: { type: String, default: null },
    runAt: { type: Date, required: true },
    lockedBy: { type: String, default: null },
    lockedUntil: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    startedAt: { type: Date, default: null },
    finishedAt: { type: Date, default: null },
    expiresAt: { type: Date, default: null },
  },
  { versionKey: false, minimize: false },
);
jobSchema.index({ state: 1, type: 1, runAt: 1 });
jobSchema.index({ ownerId: 1, type: 1, createdAt: -1 });
jobSchema.index({ type: 1, ownerId: 1, startedAt: -1 });
jobSchema.index({ expiresAt: 1 }, { partialFilterExpression: { expiresAt: { $type: 'date' } } });
jobSchema.index({ ownerId: 1, idempotencyKey: 1 }, { unique: true, partialFilterExpression: { idempotencyKey: { $type: 'string' } } });

const WITHOUT_BLOB = { blob: 0 } as const;

export async function mongoJobStore(connection: Connection): Promise<JobStore> {
  const Jobs = connection.model<JobDoc>('Job', jobSchema, 'jobs');
  await Jobs.createIndexes();
  const byKey = async (ownerId: string, idempotencyKey: string) => toJob(await Jobs.findOne({ ownerId, idempotencyKey }, WITHOUT_BLOB).lean());
  const held = (id: string, workerId: string) => ({ _id: id, state: 'running' as const, lockedBy: workerId });

  return {
    async enqueueJob(input) {
      const now = new Date();
      const key = input.idempotencyKey ?? null;
      if (key !== null) {
        // A key older than the window is free again: the old job keeps its history, not the key.
        const cutoff = new Date(now.getTime() - (input.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS));
        await Jobs.updateMany({ ownerId: input.ownerId, idempotencyKey: key, createdAt: { $lte: cutoff } }, { $unset: { idempotencyKey: 1 } });
        const existing = await byKey(input.ownerId, key);
        if (existing) return { job: existing, created: false };
      }
      try {
        const created = await Jobs.create({
          _id: newId('job'),
          type: input.type,
          ownerId: input.ownerId,
          payload: input.payload,
          state: 'queued',
          attempts: 0,
          maxAttempts: input.maxAttempts,
          lastError: null,
          result: null,
          ...(key !== null ? { idempotencyKey: key } : {}),
          group: input.group ?? null,
          runAt: input.runAt ?? now,
          lockedBy: null,
          lockedUntil: null,
          createdAt: now,
          updatedAt: now,
          startedAt: null,
          finishedAt: null,
          expiresAt: null,
        });
        const { blob: _blob, ...doc } = created.toObject();
        return { job: toJob(doc) as Job, created: true };
      } catch (err) {
        // Another submit with the same key won the insert: answer its job.
        if (key !== null && (err as { code?: number })?.code === 11000) {
          const existing = await byKey(input.ownerId, key);
          if (existing) return { job: existing, created: false };
        }
        throw err;
      }
    },
    getJob: async (id) => toJob(await Jobs.findById(id, WITHOUT_BLOB).lean()),
    findJobByIdempotencyKey: byKey,

    async claimJob(types, workerId, leaseMs, options = {}) {
      if (types.length === 0) return null;
      const now = new Date();
      const excluded = options.excludeGroups ?? [];
      // $nin also matches jobs with no group (null or missing).
      const due = {
        type: { $in: [...types] },
        $or: [{ state: 'queued', runAt: { $lte: now } }, { state: 'running', lockedUntil: { $lt: now } }],
        ...(excluded.length > 0 ? { group: { $nin: [...excluded] } } : {}),
      };
      // The fairness rule (jobs.ts): MongoDB has no multi-document claim, so the shares are read
      // first and the candidates tried in the rule's order; each try is one atomic
      // findOneAndUpdate, and a candidate another replica emptied in between is skipped.
      const [candidates, busy] = await Promise.all([
        Jobs.aggregate<{ _id: { type: string; ownerId: string }; firstRun: Date }>([
          { $match: due },
          { $group: { _id: { type: '$type', ownerId: '$ownerId' }, firstRun: { $min: '$runAt' } } },
        ]),
        Jobs.aggregate<{ _id: { type: string; ownerId: string }; n: number }>([
          { $match: { type: { $in: [...types] }, state: 'running', lockedUntil: { $gte: now } } },
          { $group: { _id: { type: '$type', ownerId: '$ownerId' }, n: { $sum: 1 } } },
        ]),
      ]);
      const served =
        candidates.length < 2
          ? []
          : await Jobs.aggregate<{ _id: { type: string; ownerId: string }; last: Date }>([
              { $match: { type: { $in: [...types] }, ownerId: { $in: [...new Set(candidates.map((c) => c._id.ownerId))] }, startedAt: { $type: 'date' } } },
              { $group: { _id: { type: '$type', ownerId: '$ownerId' }, last: { $max: '$startedAt' } } },
            ]);
      const share = (id: { type: string; ownerId: string }) => `${id.type}\u0000${id.ownerId}`;
      const lastServed = new Map(served.map((entry) => [share(entry._id), new Date(entry.last).getTime()]));
      const byOwner = new Map(busy.map((entry) => [share(entry._id), entry.n]));
      const byType = new Map<string, number>();
      for (const entry of busy) byType.set(entry._id.type, (byType.get(entry._id.type) ?? 0) + entry.n);
      const ranked = candidates
        .map((c) => {
          const key = share(c._id);
          return { ...c._id, firstRun: new Date(c.firstRun).getTime(), typeBusy: byType.get(c._id.type) ?? 0, ownerBusy: byOwner.get(key) ?? 0, lastServed: lastServed.get(key) ?? 0 };
        })
        .sort((a, b) => a.typeBusy - b.typeBusy || a.ownerBusy - b.ownerBusy || a.lastServed - b.lastServed || a.firstRun - b.firstRun || (a.ownerId < b.ownerId ? -1 : 1));
      for (const candidate of ranked) {
        const doc = await Jobs.findOneAndUpdate(
          { ...due, type: candidate.type, ownerId: candidate.ownerId } as QueryFilter<JobDoc>,
          { $set: { state: 'running', lockedBy: workerId, lockedUntil: new Date(now.getTime() + leaseMs), startedAt: now, updatedAt: now }, $inc: { attempts: 1 } },
          { sort: { runAt: 1, createdAt: 1 }, returnDocument: 'after', projection: WITHOUT_BLOB },
        ).lean();
        if (doc) return toJob(doc);
      }
      return null;
    },
    async renewJobLease(id, workerId, leaseMs) {
      const now = new Date();
      const { modifiedCount } = await Jobs.updateOne(held(id, workerId), { $set: { lockedUntil: new Date(now.getTime() + leaseMs), updatedAt: now } });
      return modifiedCount > 0;
    },
    async completeJob(id, workerId, outcome) {
      const now = new Date();
      const { modifiedCount } = await Jobs.updateOne(held(id, workerId), {
        $set: {
          state: 'succeeded',
          result: outcome.result,
          blob: outcome.blob ?? null,
          lockedBy: null,
          lockedUntil: null,
          finishedAt: now,
          updatedAt: now,
          expiresAt: outcome.expiresAt,
        },
      });
      return modifiedCount > 0;
    },
    async failJob(id, workerId, error, next) {
      const now = new Date();
      const retry = 'retryAt' in next;
      const { modifiedCount } = await Jobs.updateOne(held(id, workerId), {
        $set: {
          state: retry ? 'queued' : 'failed',
          lastError: error,
          runAt: retry ? next.retryAt : now,
          lockedBy: null,
          lockedUntil: null,
          finishedAt: retry ? null : now,
          updatedAt: now,
          expiresAt: retry ? null : next.expiresAt,
        },
      });
      return modifiedCount > 0;
    },
    async getJobBlob(id) {
      const doc = await Jobs.findById(id, { blob: 1 }).lean();
      const blob = doc?.blob as unknown;
      if (!blob) return null;
      if (Buffer.isBuffer(blob)) return blob;
      // A lean read hands back the driver's Binary.
      const binary = blob as { buffer?: Uint8Array };
      return binary.buffer ? Buffer.from(binary.buffer) : null;
    },
    async countJobs(filter) {
      if (filter.states.length === 0) return 0;
      return Jobs.countDocuments({
        state: { $in: [...filter.states] },
        ...(filter.ownerId !== undefined ? { ownerId: filter.ownerId } : {}),
        ...(filter.type !== undefined ? { type: filter.type } : {}),
      });
    },
    async listJobs(ownerId, type, limit) {
      const docs = await Jobs.find({ ownerId, type }, WITHOUT_BLOB).sort({ createdAt: -1, _id: -1 }).limit(limit).lean();
      return docs.map((doc) => toJob(doc) as Job);
    },
    async deleteExpiredJobs(now) {
      const { deletedCount } = await Jobs.deleteMany({ expiresAt: { $ne: null, $lte: now } });
      return deletedCount;
    },
  };
}

function toJob(doc: Omit<JobDoc, 'blob'> | null): Job | null {
  return (
    doc && {
      id: doc._id,
      type: doc.type,
      ownerId: doc.ownerId,
      payload: doc.payload ?? {},
      state: doc.state,
      attempts: doc.attempts,
      maxAttempts: doc.maxAttempts,
      lastError: doc.lastError ?? null,
      result: doc.result ?? null,
      idempotencyKey: doc.idempotencyKey ?? null,
      group: doc.group ?? null,
      runAt: doc.runAt,
      lockedBy: doc.lockedBy ?? null,
      lockedUntil: doc.lockedUntil ?? null,
      createdAt: doc.createdAt,
      updatedAt: doc.updatedAt,
      startedAt: doc.startedAt ?? null,
      finishedAt: doc.finishedAt ?? null,
      expiresAt: doc.expiresAt ?? null,
    }
  );
}
