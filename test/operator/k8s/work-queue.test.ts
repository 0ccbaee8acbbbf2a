import { expect } from 'chai';
import { WorkQueue } from '../../../operator/src/k8s/work-queue.ts';

describe('operator work queue', () => {
  it('queues a key once however often it is added', async () => {
    const queue = new WorkQueue();
    queue.add('shop/a');
    queue.add('shop/a');
    queue.add('shop/b');
    expect(queue.depth).to.equal(2);
    expect(await queue.get()).to.equal('shop/a');
    expect(await queue.get()).to.equal('shop/b');
  });

  it('never hands a key being processed to a second worker, and queues it again when done if it was added meanwhile', async () => {
    const queue = new WorkQueue();
    queue.add('shop/a');
    const key = (await queue.get()) as string;
    queue.add('shop/a');
    expect(queue.depth).to.equal(0);
    queue.done(key);
    expect(queue.depth).to.equal(1);
    expect(await queue.get()).to.equal('shop/a');
  });

  it('hands a key to a waiting worker as soon as it is added', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.add('shop/a');
    expect(await waiting).to.equal('shop/a');
  });

  it('backs off per key from 5 ms, doubling, up to the cap, and starts again after forget', () => {
    const queue = new WorkQueue({ baseDelayMs: 5, maxDelayMs: 100 });
    const delays = Array.from({ length: 7 }, () => queue.nextBackoff('shop/a'));
    expect(delays).to.deep.equal([5, 10, 20, 40, 80, 100, 100]);
    expect(queue.nextBackoff('shop/b')).to.equal(5);
    queue.forget('shop/a');
    expect(queue.nextBackoff('shop/a')).to.equal(5);
  });

  it('holds all retries together to the token bucket once the burst is used', () => {
    let now = 0;
    const queue = new WorkQueue({ baseDelayMs: 1, retriesPerSecond: 10, retryBurst: 2, now: () => now });
    const delays = ['a', 'b', 'c', 'd'].map((key) => queue.addRateLimited(`shop/${key}`));
    expect(delays).to.deep.equal([1, 1, 100, 200]);
    now = 1000;
    expect(queue.addRateLimited('shop/e')).to.equal(1);
    queue.shutDown();
  });

  it('returns a retried key after its delay', async () => {
    const queue = new WorkQueue({ baseDelayMs: 5 });
    queue.addRateLimited('shop/a');
    expect(queue.depth).to.equal(0);
    expect(await queue.get()).to.equal('shop/a');
    expect(queue.retries('shop/a')).to.equal(1);
  });

  it('releases waiting workers with undefined on shut down, and ignores later adds', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.shutDown();
    expect(await waiting).to.equal(undefined);
    queue.add('shop/a');
    expect(queue.depth).to.equal(0);
  });

  it('reports its depth on every change', async () => {
    const depths: number[] = [];
    const queue = new WorkQueue({ onDepth: (depth) => depths.push(depth) });
    queue.add('shop/a');
    queue.add('shop/b');
    await queue.get();
    expect(depths).to.deep.equal([1, 2, 1]);
  });
});
