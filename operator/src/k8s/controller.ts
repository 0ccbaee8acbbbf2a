import type { Logger } from '../../../lib/logger.ts';
import type { ReconcileResult } from '../controllers/common.ts';
import type { OperatorMetrics } from '../metrics.ts';
import { splitKey, type Kind } from '../resources.ts';
import { describeKubeError, isConflict } from '../../../lib/k8s/api-errors.ts';
import { WorkQueue, type WorkQueueOptions } from './work-queue.ts';

/**
 * Runs one kind's reconciles off its work queue. Keys are always queued (the informers feed it on
 * every replica), but workers run only while this replica leads, so two replicas never reconcile at
 * once. A reconcile that is not ready, or throws, comes back with the queue's backoff; a
 * successful one resets it.
 */
export interface ControllerOptions {
  kind: Kind;
  reconcile(namespace: string, name: string): Promise<ReconcileResult>;
  metrics: OperatorMetrics;
  logger: Logger;
  queue?: WorkQueueOptions;
}

export class Controller {
  readonly kind: Kind;
  readonly queue: WorkQueue;
  private readonly options: ControllerOptions;
  /** One worker per kind: reconciles of one kind never overlap, which keeps the store writes simple. */
  private running: Promise<void>[] = [];
  private active = false;

  constructor(options: ControllerOptions) {
    this.kind = options.kind;
    this.options = options;
    this.queue = new WorkQueue({
      ...options.queue,
      onDepth: (depth) => options.metrics.queueDepth.set({ kind: options.kind }, depth),
    });
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Starts the workers (on gaining the lease). */
  start(): void {
    if (this.active) return;
    this.active = true;
    this.running = [this.work()];
  }

  /** Stops taking keys (on losing the lease); reconciles in flight finish. */
  async pause(): Promise<void> {
    this.active = false;
    this.queue.add(PAUSE);
    await Promise.all(this.running);
    this.running = [];
  }

  async shutDown(): Promise<void> {
    this.active = false;
    this.queue.shutDown();
    await Promise.all(this.running);
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      if (key === PAUSE) {
        this.queue.done(key);
        if (this.active) continue;
        return;
      }
      if (!this.active) {
        this.queue.done(key);
        this.queue.add(key);
        return;
      }
      await this.process(key);
    }
  }

  private async process(key: string): Promise<void> {
    const { kind, metrics, logger } = this.options;
    const { namespace, name } = splitKey(key);
    const stopTimer = metrics.reconcileDuration.startTimer({ kind });
    try {
      const result = await this.options.reconcile(namespace, name);
      metrics.reconcileTotal.inc({ kind, result: result.outcome });
      if (result.outcome === 'not_ready' && result.retry) this.queue.addRateLimited(key);
      else this.queue.forget(key);
    } catch (err) {
      const delayMs = this.queue.addRateLimited(key);
      // Someone else changed the object since it was read: not a failure, just run again on the new one.
      if (isConflict(err)) {
        metrics.reconcileTotal.inc({ kind, result: 'conflict' });
        return;
      }
      metrics.reconcileTotal.inc({ kind, result: 'error' });
      logger.warn({ kind, object: `${namespace}/${name}`, err: describeKubeError(err), retryInMs: delayMs }, `${kind} reconcile failed; retrying`);
    } finally {
      stopTimer();
      this.queue.done(key);
    }
  }
}

/** A marker that wakes a worker blocked on an empty queue so that it can see it was paused. */
const PAUSE = '\u0000pause';
