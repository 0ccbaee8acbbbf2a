/**
 * The job runner: takes due jobs from the store (JobStore's atomic claim with a lease), runs each
 * with the handler registered for its type, renews the lease while it works, and writes the
 * outcome: succeeded, queued again after a backoff (retry.ts), or failed for good. It knows nothing
 * of what jobs do; asynchronous captures, webhooks and page monitors are handlers.
 *
 * Delivery is at least once: a process that dies mid-job leaves a lease that expires, and another
 * process (or this one, restarted) claims the job again. Handlers are therefore idempotent, keyed
 * by the job's id. While a lease is held, nobody else runs the job. A store that cannot be reached
 * when an outcome is to be written (its server restarting) does not make the job run again: the
 * outcome is kept and written once the store answers (untilStoreAnswers), which wins while the lease lasts (nobody can
 * claim the job before it expires), and is refused as a lost lease if another process took it.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.ts';
import type { Job, JobData, JobStore } from '../store/jobs.ts';
import { untilStoreAnswers } from '../store/unavailable.ts';
import { PermanentJobError, retryDelayMs, type RetryPolicy } from './retry.ts';
import { currentTraceparent, inSpan, tracingOn } from '../tracing.ts';

export interface JobContext {
  /** Aborted when this process lost the job's lease (another one may hold it now) or is stopping. */
  signal: AbortSignal;
}

export interface JobSuccess {
  result: JobData | null;
  blob?: Buffer;
}

export interface JobHandler {
  type: string;
  retry: RetryPolicy;
  /** How long a finished job (and its result) is kept. */
  retentionMs: number;
  /**
   * At most this many of this type at once in this process (within the runner's own bound). With
   * other types registered, a type never gets every slot: each other type keeps one it can take.
   */
  concurrency?: number | (() => number);
  /** At most this many jobs of one group (EnqueueOptions.group, e.g. a webhook's host) at once in this process. */
  groupConcurrency?: number;
  run(job: Job, context: JobContext): Promise<JobSuccess>;
  /**
   * Called once the job has failed for good, before that is written. Idempotent: if the process
   * dies in between, it is called again after the job is reclaimed.
   */
  onFailure?(job: Job, error: string): Promise<void>;
  /**
   * What the job keeps once it has ended, for good or not, instead of its payload: the payload
   * without what must not outlive the run (a capture's secrets). Absent: the payload as it is.
   */
  endedPayload?(job: Job): JobData;
  /**
   * Called on each sweep, after finished jobs past their retention are removed: for what the
   * handler keeps outside the store (a capture's image in the blob store) and must remove with them.
   */
  sweep?(now: Date): Promise<void>;
}

export type JobEvent =
  | { kind: 'succeeded' | 'failed'; job: Job; error?: string }
  | { kind: 'retry'; job: Job; error: string; delayMs: number }
  | { kind: 'lease-lost'; job: Job };

export interface JobRunnerOptions {
  store: JobStore;
  logger: Logger;
  /** Jobs running at once in this process, all types together. */
  concurrency: number;
  /** How long a claim holds a job without renewal; renewed every third of it. */
  leaseMs: number;
  /** How often an idle runner looks for due jobs (enqueue and finished jobs wake it sooner). */
  pollIntervalMs: number;
  /** How often finished jobs past their retention are removed. */
  sweepIntervalMs?: number;
  /** Names this process in lockedBy; default host, pid and a random suffix. */
  workerId?: string;
  random?: () => number;
  /** Metrics and tests listen here. */
  onEvent?: (event: JobEvent) => void;
}

export interface EnqueueOptions {
  idempotencyKey?: string | null;
  runAt?: Date;
  /** What the job contends for besides its type's slots; see JobHandler.groupConcurrency. */
  group?: string | null;
}

export interface JobRunner {
  readonly workerId: string;
  register(handler: JobHandler): void;
  /** Durably writes a job (or finds the same idempotent one) and wakes the runner. */
  enqueue(type: string, ownerId: string, payload: JobData, options?: EnqueueOptions): Promise<{ job: Job; created: boolean }>;
  start(): void;
  /** Stops claiming; waits up to graceMs for running jobs, then puts the rest back in the queue. */
  stop(graceMs?: number): Promise<void>;
  /** Jobs running now in this process. */
  running(): number;
}

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { store, logger } = options;
  const workerId = options.workerId ?? `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  const random = options.random ?? Math.random;
  const emit = (event: JobEvent) => {
    try {
      options.onEvent?.(event);
    } catch (err) {
      logger.error({ err }, 'A job event listener threw');
    }
  };
  const handlers = new Map<string, JobHandler>();
  const inFlight = new Map<string, { job: Job; controller: AbortController; done: Promise<void> }>();
  const inFlightByType = new Map<string, number>();
  const inFlightByGroup = new Map<string, number>();
  let started = false;
  let stopping = false;
  let ticking = false;
  let tickAgain = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;

  const limitOf = (handler: JobHandler) => {
    const own = typeof handler.concurrency === 'function' ? handler.concurrency() : (handler.concurrency ?? options.concurrency);
    // No type holds every slot: each of the others keeps one it can take.
    return Math.min(own, Math.max(1, options.concurrency - (handlers.size - 1)));
  };
  const claimableTypes = () => [...handlers.values()].filter((h) => (inFlightByType.get(h.type) ?? 0) < limitOf(h)).map((h) => h.type);
  /** Groups at their bound; their jobs stay in the store for another process, or for later. */
  const fullGroups = () =>
    [...inFlight.values()].flatMap(({ job }) => {
      const limit = handlers.get(job.type)?.groupConcurrency;
      return job.group !== null && limit !== undefined && (inFlightByGroup.get(job.group) ?? 0) >= limit ? [job.group] : [];
    });

  function schedulePoll() {
    clearTimeout(pollTimer);
    if (started && !stopping) pollTimer = setTimeout(() => void tick(), options.pollIntervalMs);
  }

  async function tick(): Promise<void> {
    if (!started || stopping) return;
    if (ticking) {
      tickAgain = true;
      return;
    }
    ticking = true;
    try {
      do {
        tickAgain = false;
        while (!stopping && inFlight.size < options.concurrency) {
          const types = claimableTypes();
          if (types.length === 0) break;
          const job = await store.claimJob(types, workerId, options.leaseMs, { excludeGroups: [...new Set(fullGroups())] });
          if (!job) break;
          execute(job);
        }
      } while (tickAgain && !stopping);
    } catch (err) {
      logger.error({ err }, 'Could not claim jobs; trying again at the next poll');
    } finally {
      ticking = false;
      schedulePoll();
    }
  }

  function execute(job: Job) {
    const handler = handlers.get(job.type) as JobHandler;
    const controller = new AbortController();
    inFlightByType.set(job.type, (inFlightByType.get(job.type) ?? 0) + 1);
    if (job.group !== null) inFlightByGroup.set(job.group, (inFlightByGroup.get(job.group) ?? 0) + 1);
    // The type's slot (a renderer slot, for captures) is free as soon as the handler returns: the
    // next job is claimed while this one's outcome is still being written.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      inFlightByType.set(job.type, (inFlightByType.get(job.type) ?? 1) - 1);
      if (job.group !== null) inFlightByGroup.set(job.group, (inFlightByGroup.get(job.group) ?? 1) - 1);
      void tick();
    };
    const done = runOne(handler, job, controller, release).finally(() => {
      inFlight.delete(job.id);
      release();
      void tick();
    });
    inFlight.set(job.id, { job, controller, done });
  }

  async function runOne(handler: JobHandler, job: Job, controller: AbortController, release: () => void): Promise<void> {
    let leaseLost = false;
    const renewal = setInterval(() => {
      store.renewJobLease(job.id, workerId, options.leaseMs).then(
        (held) => {
          if (held) return;
          leaseLost = true;
          controller.abort(new Error('lost the job lease'));
        },
        (err: unknown) => logger.warn({ err, jobId: job.id }, 'Could not renew a job lease; retrying at the next renewal'),
      );
    }, Math.max(10, Math.floor(options.leaseMs / 3)));
    const log = logger.child({ jobId: job.id, jobType: job.type, attempt: job.attempts });
    /** An outcome's write, tried again while the store cannot be reached, until it answers or this process stops (or lost the lease). */
    const recorded = <T>(write: () => Promise<T>): Promise<T> =>
      untilStoreAnswers(write, controller.signal, (err) => log.warn({ err: errorMessage(err) }, 'The store cannot be reached to record a job outcome; trying again until it can'));
    try {
      // A holder died during the last attempt: no attempt is left to give it.
      if (job.attempts > job.maxAttempts) {
        await giveUp(handler, job, job.lastError ?? 'the process running the last attempt stopped', recorded);
        return;
      }
      let success: JobSuccess;
      try {
        success = tracingOn() ? await runTraced(handler, job, controller.signal) : await handler.run(job, { signal: controller.signal });
      } catch (err) {
        release();
        if (stopping && controller.signal.aborted && !leaseLost) {
          // Interrupted by our own shutdown: back in the queue at once, for another process.
          await recorded(() => store.failJob(job.id, workerId, 'interrupted: the process running it stopped', { retryAt: new Date() }));
          return;
        }
        if (leaseLost) {
          log.warn('Lost the lease while running; the job is another process\'s now');
          emit({ kind: 'lease-lost', job });
          return;
        }
        const message = errorMessage(err);
        if (!(err instanceof PermanentJobError) && job.attempts < job.maxAttempts) {
          const delayMs = retryDelayMs(handler.retry, job.attempts, random);
          log.info({ err: message, delayMs }, 'Job attempt failed; retrying after a backoff');
          if (await recorded(() => store.failJob(job.id, workerId, message, { retryAt: new Date(Date.now() + delayMs) }))) emit({ kind: 'retry', job, error: message, delayMs });
          return;
        }
        await giveUp(handler, job, message, recorded);
        return;
      }
      release();
      const payload = handler.endedPayload?.(job);
      const completed = await recorded(() => store.completeJob(job.id, workerId, { ...success, expiresAt: new Date(Date.now() + handler.retentionMs), ...(payload ? { payload } : {}) }));
      if (completed) emit({ kind: 'succeeded', job });
      else emit({ kind: 'lease-lost', job });
    } catch (err) {
      // The store failed while writing the outcome (otherwise than by being unreachable, or while
      // this process stops): the lease expires and the job runs again.
      log.error({ err }, 'Could not record a job outcome; it runs again once its lease expires');
    } finally {
      clearInterval(renewal);
    }
  }

  async function giveUp(handler: JobHandler, job: Job, error: string, recorded: <T>(write: () => Promise<T>) => Promise<T>) {
    await handler.onFailure?.(job, error);
    const payload = handler.endedPayload?.(job);
    if (await recorded(() => store.failJob(job.id, workerId, error, { expiresAt: new Date(Date.now() + handler.retentionMs), ...(payload ? { payload } : {}) }))) emit({ kind: 'failed', job, error });
  }

  async function sweep() {
    try {
      const removed = await store.deleteExpiredJobs(new Date());
      if (removed > 0) logger.info({ removed }, 'Removed finished jobs past their retention');
    } catch (err) {
      logger.warn({ err }, 'Could not remove expired jobs');
    }
    for (const handler of handlers.values()) {
      await handler.sweep?.(new Date()).catch((err: unknown) => logger.warn({ err, type: handler.type }, 'Could not remove what expired jobs left'));
    }
  }

  return {
    workerId,
    register(handler) {
      if (handlers.has(handler.type)) throw new Error(`A handler for job type ${handler.type} is already registered`);
      handlers.set(handler.type, handler);
    },
    async enqueue(type, ownerId, payload, enqueueOptions = {}) {
      const handler = handlers.get(type);
      if (!handler) throw new Error(`No handler for job type ${type}`);
      // The span that queued it (a request's), which the job's own span continues (runTraced).
      const traceparent = currentTraceparent();
      const outcome = await store.enqueueJob({
        type,
        ownerId,
        payload: traceparent ? { ...payload, traceparent } : payload,
        maxAttempts: handler.retry.maxAttempts,
        ...(enqueueOptions.runAt ? { runAt: enqueueOptions.runAt } : {}),
        idempotencyKey: enqueueOptions.idempotencyKey ?? null,
        group: enqueueOptions.group ?? null,
      });
      if (outcome.created) void tick();
      return outcome;
    },
    start() {
      if (started) return;
      started = true;
      const sweepEvery = options.sweepIntervalMs ?? 60_000;
      sweepTimer = setInterval(() => void sweep(), sweepEvery);
      sweepTimer.unref();
      void sweep();
      void tick();
    },
    async stop(graceMs = 10_000) {
      stopping = true;
      clearTimeout(pollTimer);
      clearInterval(sweepTimer);
      const all = () => Promise.all([...inFlight.values()].map((entry) => entry.done));
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
      const outcome = await Promise.race([all(), graceOver]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        for (const entry of inFlight.values()) entry.controller.abort(new Error('the process is stopping'));
        await all();
      }
      while (ticking) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    running: () => inFlight.size,
  };
}

/**
 * A job's run as the span `job TYPE` (lib/tracing.ts), a child of the span that queued it: the
 * request's, whose traceparent enqueue kept in the payload; a job queued outside any span (a
 * monitor's schedule) starts a trace of its own. Every attempt is one such span.
 */
function runTraced(handler: JobHandler, job: Job, signal: AbortSignal): Promise<JobSuccess> {
  const parent = typeof job.payload.traceparent === 'string' ? job.payload.traceparent : '';
  const attributes = { 'viewfinder.job.type': job.type, 'viewfinder.job.attempt': job.attempts };
  return inSpan(`job ${job.type}`, attributes, () => handler.run(job, { signal }), { kind: 'consumer', parent });
}

function errorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.slice(0, 1000);
}
