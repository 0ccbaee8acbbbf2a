import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PermanentJobError, minimumRetrySpanMs, retryDelayMs, type RetryPolicy } from '../../../lib/jobs/retry.ts';
import { createJobRunner, type JobEvent, type JobHandler, type JobRunner, type JobRunnerOptions } from '../../../lib/jobs/runner.ts';
import { openSqliteStore } from '../../../lib/store/sqlite.ts';
import type { Store } from '../../../lib/store/store.ts';
import { silentLogger } from '../../support/harness.ts';
import { expectEventually } from '../../support/eventually.ts';

const QUICK: RetryPolicy = { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 100 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('job runner (embedded store)', function () {
  this.timeout(20_000);
  let dataDir: string;
  let store: Store;
  const runners: JobRunner[] = [];
  const extraStores: Store[] = [];

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-jobs-'));
    store = openSqliteStore({ dataDir });
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((runner) => runner.stop(1000)));
    await Promise.all([store, ...extraStores.splice(0)].map((s) => s.close()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  function runner(handlers: JobHandler[], options: Partial<JobRunnerOptions> = {}): JobRunner {
    const created = createJobRunner({ store, logger: silentLogger, concurrency: 4, leaseMs: 2000, pollIntervalMs: 25, ...options });
    handlers.forEach((handler) => created.register(handler));
    runners.push(created);
    return created;
  }
  const handler = (run: JobHandler['run'], extra: Partial<JobHandler> = {}): JobHandler => ({ type: 'work', retry: QUICK, retentionMs: 60_000, run, ...extra });

  it('runs an enqueued job and records its result and blob', async () => {
    const jobs = runner([handler(async (job) => ({ result: { doubled: (job.payload.n as number) * 2 }, blob: Buffer.from('bytes') }))]);
    jobs.start();
    const { job } = await jobs.enqueue('work', 'owner', { n: 21 });
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('succeeded'));
    const done = await store.getJob(job.id);
    expect(done).to.deep.include({ attempts: 1, lastError: null });
    expect(done!.result).to.deep.equal({ doubled: 42 });
    expect((await store.getJobBlob(job.id))?.toString()).to.equal('bytes');
  });

  it('never runs more jobs at once than its bound, nor more of a type than that type\'s bound', async () => {
    let running = 0;
    let most = 0;
    let mostSlow = 0;
    let slowRunning = 0;
    const busy = async (counter: 'any' | 'slow') => {
      running++;
      if (counter === 'slow') slowRunning++;
      most = Math.max(most, running);
      mostSlow = Math.max(mostSlow, slowRunning);
      await sleep(30);
      running--;
      if (counter === 'slow') slowRunning--;
      return { result: null };
    };
    const jobs = runner(
      [handler(() => busy('any')), { type: 'slow', retry: QUICK, retentionMs: 60_000, concurrency: () => 1, run: () => busy('slow') }],
      { concurrency: 3 },
    );
    for (let i = 0; i < 12; i++) await jobs.enqueue(i % 2 ? 'work' : 'slow', 'owner', { i });
    jobs.start();
    await expectEventually(async () => expect(await store.countJobs({ states: ['succeeded'] })).to.equal(12));
    expect(most).to.equal(3);
    expect(mostSlow).to.equal(1);
  });

  /** A handler whose jobs run until the test releases them; `started` lists the payloads' names in start order. */
  function gated(type = 'work', extra: Partial<JobHandler> = {}) {
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    const held = handler(
      (job, { signal }) =>
        new Promise((resolve, reject) => {
          started.push(job.payload.name as string);
          gates.set(job.payload.name as string, () => resolve({ result: null }));
          signal.addEventListener('abort', () => reject(signal.reason as Error));
        }),
      { type, ...extra },
    );
    const release = (name: string) => {
      const open = gates.get(name);
      if (!open) throw new Error(`${name} is not running`);
      open();
    };
    return { held, started, release, releaseAll: () => [...gates.values()].forEach((open) => open()) };
  }

  it('gives an idle owner\'s job the next free slot, however many jobs another owner has queued', async () => {
    const work = gated();
    const jobs = runner([work.held], { concurrency: 1 });
    for (let i = 0; i < 6; i++) await jobs.enqueue('work', 'flood', { name: `flood-${i}` });
    jobs.start();
    await expectEventually(async () => expect(work.started).to.deep.equal(['flood-0']));
    await jobs.enqueue('work', 'quiet', { name: 'quiet-0' });
    work.release('flood-0');
    await expectEventually(async () => expect(work.started).to.have.length(2));
    expect(work.started[1]).to.equal('quiet-0');
    work.releaseAll();
  });

  it('shares the slots of two runners on one store across owners: the idle owner goes first on either', async () => {
    const [first, second] = [gated(), gated()];
    const other = openSqliteStore({ dataDir });
    extraStores.push(other);
    const a = runner([first.held], { concurrency: 1 });
    const b = runner([second.held], { concurrency: 1, store: other });
    for (let i = 0; i < 6; i++) await a.enqueue('work', 'flood', { name: `flood-${i}` });
    a.start();
    b.start();
    await expectEventually(async () => expect([...first.started, ...second.started].sort()).to.deep.equal(['flood-0', 'flood-1']));
    await a.enqueue('work', 'quiet', { name: 'quiet-0' });
    const releasedOn = first.started.length > 0 ? first : second;
    releasedOn.release(releasedOn.started[0] as string);
    await expectEventually(async () => expect(first.started.length + second.started.length).to.equal(3));
    expect([...first.started, ...second.started]).to.include('quiet-0');
    first.releaseAll();
    second.releaseAll();
  });

  it('never lets one job type hold every slot: another type still starts while the first has a queue', async () => {
    const slow = gated('slow');
    const quick = gated('quick');
    const jobs = runner([slow.held, quick.held], { concurrency: 3 });
    for (let i = 0; i < 6; i++) await jobs.enqueue('slow', 'owner', { name: `slow-${i}` });
    jobs.start();
    await expectEventually(async () => expect(slow.started).to.have.length(2));
    await jobs.enqueue('quick', 'owner', { name: 'quick-0' });
    await expectEventually(async () => expect(quick.started).to.deep.equal(['quick-0']));
    expect(slow.started, 'the slow type keeps its bound of 2 of 3 slots').to.have.length(2);
    slow.releaseAll();
    quick.releaseAll();
  });

  it('runs at most groupConcurrency jobs of one group at once, and other groups meanwhile', async () => {
    const hooks = gated('work', { groupConcurrency: 1 });
    const jobs = runner([hooks.held], { concurrency: 4 });
    for (let i = 0; i < 3; i++) await jobs.enqueue('work', 'owner', { name: `slow-host-${i}` }, { group: 'slow.example' });
    await jobs.enqueue('work', 'owner', { name: 'fast-host' }, { group: 'fast.example' });
    jobs.start();
    await expectEventually(async () => expect([...hooks.started].sort()).to.deep.equal(['fast-host', 'slow-host-0']));
    hooks.release('fast-host');
    await expectEventually(async () => expect((await store.countJobs({ states: ['succeeded'] }))).to.equal(1));
    expect(hooks.started, 'the slow host still holds its one slot').to.have.length(2);
    hooks.release('slow-host-0');
    await expectEventually(async () => expect(hooks.started).to.have.length(3));
    expect(hooks.started[2]).to.equal('slow-host-1');
    hooks.releaseAll();
  });

  it('retries a failing job with backoff, recording attempts and the last error, until it succeeds', async () => {
    const events: JobEvent[] = [];
    let calls = 0;
    const jobs = runner(
      [
        handler(async () => {
          calls++;
          if (calls < 3) throw new Error(`receiver said 500 (call ${calls})`);
          return { result: { calls } };
        }),
      ],
      { onEvent: (event) => events.push(event) },
    );
    jobs.start();
    const { job } = await jobs.enqueue('work', 'owner', {});
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('succeeded'));
    const done = await store.getJob(job.id);
    expect(done).to.deep.include({ attempts: 3, lastError: 'receiver said 500 (call 2)' });
    expect(events.map((event) => event.kind)).to.deep.equal(['retry', 'retry', 'succeeded']);
    const delays = events.flatMap((event) => (event.kind === 'retry' ? [event.delayMs] : []));
    expect(delays[0]).to.be.within(10, 20);
    expect(delays[1]).to.be.within(20, 40);
  });

  it('fails a job for good after its last attempt, telling the handler once', async () => {
    const failures: string[] = [];
    const jobs = runner([
      handler(
        async () => {
          throw new Error('always down');
        },
        { onFailure: async (_job, error) => void failures.push(error) },
      ),
    ]);
    jobs.start();
    const { job } = await jobs.enqueue('work', 'owner', {});
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('failed'));
    expect(await store.getJob(job.id)).to.deep.include({ attempts: 3, lastError: 'always down' });
    expect(failures).to.deep.equal(['always down']);
  });

  it('fails a job at once on a PermanentJobError', async () => {
    const jobs = runner([
      handler(async () => {
        throw new PermanentJobError('target refused by the network guard');
      }),
    ]);
    jobs.start();
    const { job } = await jobs.enqueue('work', 'owner', {});
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('failed'));
    expect(await store.getJob(job.id)).to.deep.include({ attempts: 1, lastError: 'target refused by the network guard' });
  });

  it('renews the lease of a job that runs longer than the lease, so that another runner never takes it', async () => {
    let runs = 0;
    const slow = handler(async () => {
      runs++;
      await sleep(400);
      return { result: null };
    });
    const second = openSqliteStore({ dataDir });
    extraStores.push(second);
    const one = runner([slow], { leaseMs: 90 });
    const two = runner([slow], { leaseMs: 90, store: second });
    const { job } = await one.enqueue('work', 'owner', {});
    one.start();
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('running'));
    two.start();
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('succeeded'));
    expect(runs).to.equal(1);
    expect((await store.getJob(job.id))?.attempts).to.equal(1);
  });

  it('reclaims a job whose holder died (its lease expired) and runs it to the end', async () => {
    const { job } = await store.enqueueJob({ type: 'work', ownerId: 'owner', payload: {}, maxAttempts: 3 });
    expect((await store.claimJob(['work'], 'dead-process', 50))?.id).to.equal(job.id);
    const jobs = runner([handler(async () => ({ result: { by: 'survivor' } }))], { workerId: 'survivor' });
    jobs.start();
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('succeeded'));
    expect(await store.getJob(job.id)).to.deep.include({ attempts: 2 });
  });

  it('fails a reclaimed job whose holder died during its last attempt, without running it again', async () => {
    let runs = 0;
    const { job } = await store.enqueueJob({ type: 'work', ownerId: 'owner', payload: {}, maxAttempts: 1 });
    await store.claimJob(['work'], 'dead-process', 30);
    const jobs = runner([handler(async () => ((runs += 1), { result: null }))]);
    jobs.start();
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('failed'));
    expect(runs).to.equal(0);
  });

  it('runs each of many jobs exactly once with two runners on two handles of one store', async () => {
    const seen: string[] = [];
    const work = handler(async (job) => {
      seen.push(job.id);
      await sleep(5);
      return { result: null };
    });
    const second = openSqliteStore({ dataDir });
    extraStores.push(second);
    const one = runner([work]);
    const two = runner([work], { store: second });
    for (let i = 0; i < 40; i++) await one.enqueue('work', 'owner', { i });
    one.start();
    two.start();
    await expectEventually(async () => expect(await store.countJobs({ states: ['succeeded'] })).to.equal(40));
    expect(seen).to.have.length(40);
    expect(new Set(seen).size).to.equal(40);
  });

  it('on stop, puts a job that did not finish in its grace time back in the queue', async () => {
    const jobs = runner([
      handler(
        (_job, { signal }) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener('abort', () => reject(signal.reason as Error));
          }),
      ),
    ]);
    jobs.start();
    const { job } = await jobs.enqueue('work', 'owner', {});
    await expectEventually(async () => expect((await store.getJob(job.id))?.state).to.equal('running'));
    await jobs.stop(50);
    const back = await store.getJob(job.id);
    expect(back).to.deep.include({ state: 'queued', lockedBy: null, lastError: 'interrupted: the process running it stopped' });
  });

  it('removes finished jobs once their retention has passed', async () => {
    const jobs = runner([handler(async () => ({ result: null }), { retentionMs: 30 })], { sweepIntervalMs: 40 });
    jobs.start();
    const { job } = await jobs.enqueue('work', 'owner', {});
    await expectEventually(async () => expect(await store.getJob(job.id)).to.equal(null));
  });
});

describe('retry policy', () => {
  const policy: RetryPolicy = { maxAttempts: 10, baseDelayMs: 30_000, maxDelayMs: 3_600_000 };

  it('doubles the step after each failure, keeps between half and all of it, and caps it', () => {
    expect(retryDelayMs(policy, 1, () => 0)).to.equal(15_000);
    expect(retryDelayMs(policy, 1, () => 1)).to.equal(30_000);
    expect(retryDelayMs(policy, 3, () => 0.5)).to.equal(90_000);
    expect(retryDelayMs(policy, 30, () => 1)).to.equal(3_600_000);
  });

  it('spreads retries: the same failure gets different delays', () => {
    const delays = new Set(Array.from({ length: 20 }, () => retryDelayMs(policy, 4)));
    expect(delays.size).to.be.greaterThan(10);
  });

  it('computes the shortest span a policy covers', () => {
    expect(minimumRetrySpanMs({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 })).to.equal(50 + 100);
  });
});
