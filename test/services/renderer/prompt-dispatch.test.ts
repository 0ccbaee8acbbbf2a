import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import puppeteer from 'puppeteer-core';
import { Cluster } from 'puppeteer-cluster';
import ConcurrencyModule from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import type { WorkerInstance } from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import { dispatchPromptly } from '../../../services/renderer/src/prompt-dispatch.ts';

const ConcurrencyImplementation = ConcurrencyModule.default;

/** A concurrency model with no browser behind it: the cluster's own scheduling is what is tested. */
class NoBrowser extends ConcurrencyImplementation {
  override async init(): Promise<void> {}
  override async close(): Promise<void> {}
  override async workerInstance(): Promise<WorkerInstance> {
    return {
      // The worker listens for the page's errors; an emitter with nothing behind it stands in for one.
      jobInstance: async () => ({ resources: { page: new EventEmitter() as never }, close: async () => {} }),
      close: async () => {},
      repair: async () => {},
    };
  }
}

/**
 * Which comes first once a job has ended: the next job, queued at once, or a 1 ms timer set at the
 * same moment. With dispatchPromptly, the event loop's phases decide (an immediate runs before the
 * next timers), whatever the machine's speed; without it, puppeteer-cluster's 10 ms spacing does, as
 * long as a job that does nothing takes less than 9 ms.
 */
async function nextJobAgainstTimer(cluster: Cluster<unknown, unknown>): Promise<string[]> {
  const order: string[] = [];
  await cluster.execute(null, async () => undefined);
  const timer = new Promise<void>((resolve) => setTimeout(() => (order.push('1 ms timer'), resolve()), 1));
  const next = cluster.execute(null, async () => void order.push('next job'));
  await Promise.all([timer, next]);
  return order;
}

describe('dispatchPromptly (puppeteer-cluster scheduling)', () => {
  let cluster: Cluster<unknown, unknown>;
  afterEach(async () => {
    await cluster?.close();
  });

  it("without it, puppeteer-cluster starts a job queued right after the last one only once its 10 ms spacing is over", async () => {
    cluster = await Cluster.launch({ concurrency: NoBrowser, maxConcurrency: 1, monitor: false, puppeteer });
    expect(await nextJobAgainstTimer(cluster)).to.deep.equal(['1 ms timer', 'next job']);
  });

  it('with it, the job starts on the next turn of the event loop', async () => {
    cluster = await Cluster.launch({ concurrency: NoBrowser, maxConcurrency: 1, monitor: false, puppeteer });
    dispatchPromptly(cluster);
    expect(await nextJobAgainstTimer(cluster)).to.deep.equal(['next job', '1 ms timer']);
    // Many at once still all run, each on a worker as it frees up.
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => cluster.execute(i, async ({ data }) => data)));
    expect(results).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
  });

  it('refuses a puppeteer-cluster that no longer schedules with work() and doWork()', () => {
    expect(() => dispatchPromptly({} as Cluster<unknown, unknown>)).to.throw(/no longer has Cluster#work and #doWork/);
  });
});
