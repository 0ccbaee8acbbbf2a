import type { Cluster } from 'puppeteer-cluster';

interface ClusterScheduling {
  work?: () => Promise<void>;
  doWork?: () => Promise<void>;
  isClosed?: boolean;
}

/**
 * puppeteer-cluster looks for queued jobs at most once every 10 ms: its `work()` schedules the next
 * look 10 ms after the previous one. A capture queued within 10 ms of the last look (the next
 * request of a client that sends it as soon as it has its answer) waited for the rest of those
 * 10 ms. The pool never queues more jobs in the cluster than it has workers (admission.ts holds the
 * rest), so there is nothing to spread out: the cluster looks on the next turn of the event loop.
 * Throws if puppeteer-cluster no longer schedules this way, rather than silently doing nothing.
 */
export function dispatchPromptly(cluster: Cluster<unknown, unknown>): void {
  const scheduling = cluster as unknown as ClusterScheduling;
  if (typeof scheduling.work !== 'function' || typeof scheduling.doWork !== 'function') {
    throw new Error('puppeteer-cluster no longer has Cluster#work and #doWork: see services/renderer/src/prompt-dispatch.ts');
  }
  const doWork = scheduling.doWork.bind(cluster);
  let scheduled = false;
  scheduling.work = async () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (!scheduling.isClosed) void doWork();
    });
  };
}
