import { Schema, type Connection, type QueryFilter } from 'mongoose';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS, type Job, type JobData, type JobState, type JobStore } from './jobs.ts';
import { backfill, isDuplicateKey, oneWriteAtATime } from './mongo-compat.ts';
import { newId } from './rules.ts';

/**
 * Jobs in MongoDB, written to hold on MongoDB and on FerretDB v1 alike, which applies an update as a
 * read and then a write of the whole document (so a conditional findOneAndUpdate lets two callers
 * through); an insert of a unique id is the one step both servers apply once.
 * - A claim inserts a claim document whose id is the job's id and the claim's number (its attempt):
 *   of two replicas claiming one job, one insert succeeds, and only that replica writes the job.
 * - Idempotency keys are unique per owner through `idempotencySlot` (owner and key, or the job's own
 *   id once the key is free): FerretDB has no partial indexes. Two concurrent submits with one key
 *   make one job, the loser reads it.
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
  idempotencySlot: string;
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
    idempotencySlot: { type: String, required: true },
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
  // Indexes are built after the idempotencySlot backfill (mongoJobStore).
  { versionKey: false, minimize: false, autoIndex: false },
);
jobSchema.index({ state: 1, type: 1, runAt: 1 });
jobSchema.index({ ownerId: 1, type: 1, createdAt: -1 });
jobSchema.index({ type: 1, ownerId: 1, startedAt: -1 });
jobSchema.index({ expiresAt: 1 });
jobSchema.index({ idempotencySlot: 1 }, { unique: true });
jobSchema.index({ ownerId: 1, idempotencyKey: 1 });

/** One per claim of a job: `${jobId}#${attempt}`, inserted once by the replica that takes it. */
interface ClaimDoc {
  _id: string;
  jobId: string;
  workerId: string;
  /** Until when the claim stands without the job showing it (a claimer killed between its two writes). */
  leaseUntil: Date;
}
const claimSchema = new Schema<ClaimDoc>(
  { _id: String, jobId: { type: String, required: true, index: true }, workerId: { type: String, required: true }, leaseUntil: { type: Date, required: true } },
  { versionKey: false },
);
/** How many due jobs one claim looks at: the next ones when another replica took the first. */
const CLAIM_CANDIDATES = 8;

const WITHOUT_BLOB = { blob: 0 } as const;

export async function mongoJobStore(connection: Connection): Promise<JobStore> {
  const Jobs = connection.model<JobDoc>('Job', jobSchema, 'jobs');
  const Claims = connection.model<ClaimDoc>('JobClaim', claimSchema, 'jobClaims');
  await backfill(Jobs, 'idempotencySlot', (doc) => (doc.idempotencyKey ? idempotencySlot(doc.ownerId, doc.idempotencyKey) : doc._id));
  await Promise.all([Jobs.createIndexes(), Claims.createIndexes()]);
  const byKey = async (ownerId: string, idempotencyKey: string) => toJob(await Jobs.findOne({ ownerId, idempotencyKey }, WITHOUT_BLOB).lean());
  const held = (id: string, workerId: string) => ({ _id: id, state: 'running' as const, lockedBy: workerId });
  const serially = oneWriteAtATime();

  /**
   * Takes `seen` for `workerId` if no one took it since it was read: the claim document decides
   * between replicas, then the job is written only if it is still as it was seen (a job that
   * finished in between is not run again); when it is not, the claim is withdrawn.
   */
  async function claim(seen: Omit<JobDoc, 'blob'>, workerId: string, now: Date, leaseMs: number): Promise<Job | null> {
    const attempt = seen.attempts + 1;
    const claimId = `${seen._id}#${attempt}`;
    // The lease runs from now, not from the start of the claim: looking at taken jobs took time.
    const claimedAt = new Date();
    const lockedUntil = new Date(claimedAt.getTime() + leaseMs);
    try {
      await Claims.create({ _id: claimId, jobId: seen._id, workerId, leaseUntil: lockedUntil });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // Taken by another replica; or claimed by one killed before it wrote the job: free that claim
      // once its lease is over, for the next poll.
      await Claims.deleteOne({ _id: claimId, leaseUntil: { $lt: now } });
      return null;
    }
    const set = { state: 'running' as const, lockedBy: workerId, lockedUntil, attempts: attempt, startedAt: claimedAt, updatedAt: claimedAt };
    const { modifiedCount } = await serially(seen._id, () =>
      Jobs.updateOne({ _id: seen._id, attempts: seen.attempts, state: seen.state, updatedAt: seen.updatedAt }, { $set: set }),
    );
    if (modifiedCount === 0) {
      await Claims.deleteOne({ _id: claimId, workerId });
      return null;
    }
    return toJob({ ...seen, ...set });
  }

  /**
   * The (type, account) pairs that have due jobs, in the fairness rule's order (jobs.ts). The
   * counts come from $group with $sum; a pair's oldest due job and its last start are read with one
   * indexed findOne each, since FerretDB v1 has no $min or $max accumulator (only $count and $sum).
   */
  async function rankByFairness(due: object, types: readonly string[], now: Date): Promise<Array<{ type: string; ownerId: string }>> {
    type Pair = { type: string; ownerId: string };
    const [pairs, busy] = await Promise.all([
      Jobs.aggregate<{ _id: Pair }>([{ $match: due }, { $group: { _id: { type: '$type', ownerId: '$ownerId' }, n: { $sum: 1 } } }]),
      Jobs.aggregate<{ _id: Pair; n: number }>([
        { $match: { type: { $in: [...types] }, state: 'running', lockedUntil: { $gte: now } } },
        { $group: { _id: { type: '$type', ownerId: '$ownerId' }, n: { $sum: 1 } } },
      ]),
    ]);
    const share = (id: Pair) => `${id.type}\u0000${id.ownerId}`;
    const byOwner = new Map(busy.map((entry) => [share(entry._id), entry.n]));
    const byType = new Map<string, number>();
    for (const entry of busy) byType.set(entry._id.type, (byType.get(entry._id.type) ?? 0) + entry.n);
    const ranked = await Promise.all(
      pairs.map(async ({ _id: pair }) => {
        const [oldest, latest] = await Promise.all([
          Jobs.findOne({ ...due, type: pair.type, ownerId: pair.ownerId } as QueryFilter<JobDoc>, { runAt: 1 }).sort({ runAt: 1 }).lean(),
          pairs.length < 2 ? null : Jobs.findOne({ type: pair.type, ownerId: pair.ownerId, startedAt: { $type: 'date' } }, { startedAt: 1 }).sort({ startedAt: -1 }).lean(),
        ]);
        return {
          ...pair,
          firstRun: oldest ? new Date(oldest.runAt).getTime() : Number.MAX_SAFE_INTEGER,
          typeBusy: byType.get(pair.type) ?? 0,
          ownerBusy: byOwner.get(share(pair)) ?? 0,
          lastServed: latest?.startedAt ? new Date(latest.startedAt).getTime() : 0,
        };
      }),
    );
    return ranked.sort((a, b) => a.typeBusy - b.typeBusy || a.ownerBusy - b.ownerBusy || a.lastServed - b.lastServed || a.firstRun - b.firstRun || (a.ownerId < b.ownerId ? -1 : 1));
  }

  return {
    async enqueueJob(input) {
      const now = new Date();
      const key = input.idempotencyKey ?? null;
      if (key !== null) {
        // A key older than the window is free again: the old job keeps its history, not the key.
        const cutoff = new Date(now.getTime() - (input.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS));
        for (const stale of await Jobs.find({ ownerId: input.ownerId, idempotencyKey: key, createdAt: { $lte: cutoff } }, { _id: 1 }).lean()) {
          await serially(stale._id, () => Jobs.updateOne({ _id: stale._id }, { $unset: { idempotencyKey: 1 }, $set: { idempotencySlot: stale._id } }));
        }
        const existing = await byKey(input.ownerId, key);
        if (existing) return { job: existing, created: false };
      }
      const id = newId('job');
      try {
        const created = await Jobs.create({
          _id: id,
          type: input.type,
          ownerId: input.ownerId,
          payload: input.payload,
          state: 'queued',
          attempts: 0,
          maxAttempts: input.maxAttempts,
          lastError: null,
          result: null,
          ...(key !== null ? { idempotencyKey: key } : {}),
          idempotencySlot: key !== null ? idempotencySlot(input.ownerId, key) : id,
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
        if (key !== null && isDuplicateKey(err)) {
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
      // The fairness rule (jobs.ts): the shares are read first and the (type, account) pairs tried
      // in the rule's order. Within a pair, its due jobs oldest first, but those another replica
      // took during this call; each take is decided by a claim document (claim()), since neither
      // FerretDB nor a read-then-write makes findOneAndUpdate a claim between replicas.
      for (const pair of await rankByFairness(due, types, now)) {
        const lost: string[] = [];
        for (;;) {
          const candidates = await Jobs.find({ ...due, type: pair.type, ownerId: pair.ownerId, _id: { $nin: lost } } as QueryFilter<JobDoc>, WITHOUT_BLOB)
            .sort({ runAt: 1, createdAt: 1 })
            .limit(CLAIM_CANDIDATES)
            .lean();
          if (candidates.length === 0) break;
          for (const seen of candidates) {
            const claimed = await claim(seen, workerId, now, leaseMs);
            if (claimed) return claimed;
            lost.push(seen._id);
          }
        }
      }
      return null;
    },
    async renewJobLease(id, workerId, leaseMs) {
      const now = new Date();
      const { modifiedCount } = await serially(id, () => Jobs.updateOne(held(id, workerId), { $set: { lockedUntil: new Date(now.getTime() + leaseMs), updatedAt: now } }));
      return modifiedCount > 0;
    },
    async completeJob(id, workerId, outcome) {
      const now = new Date();
      const { modifiedCount } = await serially(id, () => Jobs.updateOne(held(id, workerId), {
        $set: {
          state: 'succeeded',
          result: outcome.result,
          blob: outcome.blob ?? null,
          lockedBy: null,
          lockedUntil: null,
          finishedAt: now,
          updatedAt: now,
          expiresAt: outcome.expiresAt,
          ...(outcome.payload ? { payload: outcome.payload } : {}),
        },
      }));
      return modifiedCount > 0;
    },
    async failJob(id, workerId, error, next) {
      const now = new Date();
      const retry = 'retryAt' in next;
      const { modifiedCount } = await serially(id, () => Jobs.updateOne(held(id, workerId), {
        $set: {
          state: retry ? 'queued' : 'failed',
          lastError: error,
          runAt: retry ? next.retryAt : now,
          lockedBy: null,
          lockedUntil: null,
          finishedAt: retry ? null : now,
          updatedAt: now,
          expiresAt: retry ? null : next.expiresAt,
          ...(!retry && next.payload ? { payload: next.payload } : {}),
        },
      }));
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
      const expired = { expiresAt: { $ne: null, $lte: now } };
      const ids = (await Jobs.find(expired, { _id: 1 }).lean()).map((doc) => doc._id);
      if (ids.length === 0) return 0;
      const { deletedCount } = await Jobs.deleteMany({ _id: { $in: ids }, ...expired });
      await Claims.deleteMany({ jobId: { $in: ids } });
      return deletedCount;
    },
  };
}

/** Unambiguous for any owner and key, and never a job's id. */
function idempotencySlot(ownerId: string, key: string): string {
  return JSON.stringify([ownerId, key]);
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
