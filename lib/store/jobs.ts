/**
 * Durable jobs: the part of the store port that lib/jobs/runner.ts runs on. A job is written
 * before anyone is told it exists, claimed atomically with a lease (lockedBy/lockedUntil), and
 * claimable again once that lease has expired, so a process that dies mid-job loses nothing and
 * no two processes hold one job at once. The store knows nothing of what a job does: `type` and
 * `payload` are the caller's.
 *
 * Times are compared in the store (claims, expiry), so every process on one store must have a
 * roughly synchronized clock, as with any lease.
 */

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** JSON that round-trips through both backends. */
export type JobData = Record<string, unknown>;

export interface Job {
  /** `job_…`, unguessable. */
  id: string;
  type: string;
  /** Whose job it is (an account id, or a fixed owner in self-hosted mode); lookups by owner see only theirs. */
  ownerId: string;
  payload: JobData;
  state: JobState;
  /** Claims so far, the running one included. */
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  /** What the handler returned on success (small: metadata, not bytes). */
  result: JobData | null;
  /** The caller's key for repeated submits: same owner and key within the window, same job. */
  idempotencyKey: string | null;
  /**
   * What the job contends for besides its type's slots (a webhook's target host): a claim can be
   * told to leave the groups that are at their bound (ClaimOptions.excludeGroups). Null: none.
   */
  group: string | null;
  /** Not claimed before this time (retries back off by moving it). */
  runAt: Date;
  lockedBy: string | null;
  lockedUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** When the latest attempt started. */
  startedAt: Date | null;
  finishedAt: Date | null;
  /** After this the job (and its blob) is removed by deleteExpiredJobs; null while it is not finished. */
  expiresAt: Date | null;
}

export interface NewJob {
  type: string;
  ownerId: string;
  payload: JobData;
  maxAttempts: number;
  /** Default: now. */
  runAt?: Date;
  idempotencyKey?: string | null;
  group?: string | null;
  /** How far back a job with the same owner and idempotency key is the same job. Default 24 h. */
  idempotencyWindowMs?: number;
}

export interface JobOutcome {
  result: JobData | null;
  /** Bytes kept beside the job (an image), read with getJobBlob; not part of getJob's answer. */
  blob?: Buffer;
  /** When the finished job is removed. */
  expiresAt: Date;
  /** What the finished job keeps instead of its payload (what must not outlive the run taken out); absent: the payload as it is. */
  payload?: JobData;
}

export interface JobCountFilter {
  ownerId?: string;
  type?: string;
  states: readonly JobState[];
}

export interface ClaimOptions {
  /** Jobs of these groups are left where they are (their holders are at the group's bound). */
  excludeGroups?: readonly string[];
}

export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface JobStore {
  /**
   * Writes a queued job durably, or answers the existing one (created: false) when the same owner
   * used the same idempotency key within the window. Two concurrent calls with one key make one job.
   */
  enqueueJob(input: NewJob): Promise<{ job: Job; created: boolean }>;
  getJob(id: string): Promise<Job | null>;
  findJobByIdempotencyKey(ownerId: string, idempotencyKey: string): Promise<Job | null>;
  /**
   * Atomically takes one job of `types` that is due (queued with runAt <= now), or whose holder's
   * lease has expired (running with lockedUntil < now): sets it running, locked by `workerId`
   * until now + leaseMs, and counts the attempt. Null when there is none.
   *
   * Which one is the fairness rule, decided from what every process on the store holds (running
   * jobs with a live lease), so that it holds across replicas: first the type with the fewest
   * running jobs, then, within it, the owner (account) with the fewest running jobs of that type,
   * then the owner served least recently (its latest start of that type; never counts as oldest),
   * then that owner's oldest runAt. Owners thus take turns (round-robin), and an owner with
   * nothing running is served before one with a long queue, whatever the order of submission.
   */
  claimJob(types: readonly string[], workerId: string, leaseMs: number, options?: ClaimOptions): Promise<Job | null>;
  /** Extends the lease; false when `workerId` no longer holds the job (it expired and was taken). */
  renewJobLease(id: string, workerId: string, leaseMs: number): Promise<boolean>;
  /** Marks the job succeeded, if `workerId` still holds it; false otherwise (nothing is written). */
  completeJob(id: string, workerId: string, outcome: JobOutcome): Promise<boolean>;
  /**
   * Records a failed attempt, if `workerId` still holds the job: queued again at `retryAt`, or
   * failed for good when `retryAt` is null (then `expiresAt` says when it is removed, and `payload`,
   * if given, replaces the payload as JobOutcome's does).
   */
  failJob(id: string, workerId: string, error: string, next: { retryAt: Date } | { expiresAt: Date; payload?: JobData }): Promise<boolean>;
  getJobBlob(id: string): Promise<Buffer | null>;
  countJobs(filter: JobCountFilter): Promise<number>;
  /** An owner's most recent jobs of a type, newest first. */
  listJobs(ownerId: string, type: string, limit: number): Promise<Job[]>;
  /** Removes finished jobs whose expiresAt is past; answers how many. */
  deleteExpiredJobs(now: Date): Promise<number>;
}
