import { expect } from 'chai';
import type { Account, Store } from '../../lib/store/store.ts';

/** Durable jobs: part of the store conformance suite (conformance.ts calls this inside its own setup). */
export function jobStoreConformance(current: () => { store: Store; account: Account; other: Account }): void {
  const LEASE = 60_000;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const later = (ms: number) => new Date(Date.now() + ms);

  describe('jobs', () => {
    it('writes a queued job with its payload and reads it back', async () => {
      const { store, account } = current();
      const { job, created } = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { url: 'https://example.com/', n: 1, nested: { a: [1, 2] } }, maxAttempts: 3 });
      expect(created).to.equal(true);
      expect(job.id).to.match(/^job_[0-9a-f]{24}$/);
      expect(job).to.deep.include({ type: 'capture', ownerId: account.id, state: 'queued', attempts: 0, maxAttempts: 3, lastError: null, result: null, lockedBy: null, lockedUntil: null });
      expect(job.payload).to.deep.equal({ url: 'https://example.com/', n: 1, nested: { a: [1, 2] } });
      expect(await store.getJob(job.id)).to.deep.equal(job);
      expect(await store.getJob('job_missing')).to.equal(null);
    });

    it('answers the same job for the same owner and idempotency key, and a new one for another owner', async () => {
      const { store, account, other } = current();
      const first = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { n: 1 }, maxAttempts: 1, idempotencyKey: 'order-7' });
      const again = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { n: 2 }, maxAttempts: 1, idempotencyKey: 'order-7' });
      expect(again).to.deep.include({ created: false });
      expect(again.job.id).to.equal(first.job.id);
      expect(again.job.payload).to.deep.equal({ n: 1 });
      const theirs = await store.enqueueJob({ type: 'capture', ownerId: other.id, payload: {}, maxAttempts: 1, idempotencyKey: 'order-7' });
      expect(theirs.created).to.equal(true);
      expect((await store.findJobByIdempotencyKey(account.id, 'order-7'))?.id).to.equal(first.job.id);
      expect(await store.findJobByIdempotencyKey(account.id, 'order-8')).to.equal(null);
    });

    it('makes one job from concurrent submits with one idempotency key', async () => {
      const { store, account } = current();
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1, idempotencyKey: 'same' })));
      expect(new Set(outcomes.map((o) => o.job.id)).size).to.equal(1);
      expect(outcomes.filter((o) => o.created)).to.have.length(1);
      expect(await store.countJobs({ ownerId: account.id, states: ['queued'] })).to.equal(1);
    });

    it('frees an idempotency key once it is older than the window', async () => {
      const { store, account } = current();
      const first = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1, idempotencyKey: 'k' });
      await sleep(20);
      const second = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1, idempotencyKey: 'k', idempotencyWindowMs: 10 });
      expect(second.created).to.equal(true);
      expect(second.job.id).to.not.equal(first.job.id);
      expect((await store.getJob(first.job.id))?.idempotencyKey).to.equal(null);
    });

    it('claims a due job of the given types, setting the lease and counting the attempt', async () => {
      const { store, account } = current();
      await store.enqueueJob({ type: 'other', ownerId: account.id, payload: {}, maxAttempts: 1 });
      const { job } = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 2 });
      const claimed = await store.claimJob(['capture'], 'worker-a', LEASE);
      expect(claimed?.id).to.equal(job.id);
      expect(claimed).to.deep.include({ state: 'running', lockedBy: 'worker-a', attempts: 1 });
      expect(claimed!.lockedUntil!.getTime()).to.be.greaterThan(Date.now() + LEASE / 2);
      expect(claimed!.startedAt).to.be.instanceOf(Date);
      expect(await store.claimJob(['capture'], 'worker-b', LEASE), 'a held job is nobody else\'s').to.equal(null);
      expect(await store.claimJob([], 'worker-b', LEASE)).to.equal(null);
    });

    it('does not claim a job before its runAt, and takes the oldest due one first', async () => {
      const { store, account } = current();
      await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { n: 'future' }, maxAttempts: 1, runAt: later(60_000) });
      const older = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { n: 'older' }, maxAttempts: 1, runAt: later(-2000) });
      await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { n: 'newer' }, maxAttempts: 1, runAt: later(-1000) });
      expect((await store.claimJob(['capture'], 'w', LEASE))?.id).to.equal(older.job.id);
      expect((await store.claimJob(['capture'], 'w', LEASE))?.payload).to.deep.equal({ n: 'newer' });
      expect(await store.claimJob(['capture'], 'w', LEASE)).to.equal(null);
    });

    it('claims next for the account with the fewest running jobs of the type, whatever another account has queued', async () => {
      const { store, account, other } = current();
      for (let i = 0; i < 5; i++) await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { i }, maxAttempts: 1, runAt: later(-5000 + i) });
      const latecomer = await store.enqueueJob({ type: 'capture', ownerId: other.id, payload: {}, maxAttempts: 1 });
      expect((await store.claimJob(['capture'], 'w', LEASE))?.payload, 'both idle: the oldest due job').to.deep.equal({ i: 0 });
      expect((await store.claimJob(['capture'], 'w', LEASE))?.id, 'the account with none running comes before the flood').to.equal(latecomer.job.id);
      expect((await store.claimJob(['capture'], 'w', LEASE))?.payload).to.deep.equal({ i: 1 });
    });

    it('takes turns between accounts with as many running jobs: the one served least recently goes first', async () => {
      const { store, account, other } = current();
      for (let i = 0; i < 3; i++) await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { i }, maxAttempts: 1, runAt: later(-5000 + i) });
      const first = await store.claimJob(['capture'], 'w', LEASE);
      await store.completeJob(first!.id, 'w', { result: null, expiresAt: later(60_000) });
      const latecomer = await store.enqueueJob({ type: 'capture', ownerId: other.id, payload: {}, maxAttempts: 1 });
      expect((await store.claimJob(['capture'], 'w', LEASE))?.id, 'never served, so before the older queue').to.equal(latecomer.job.id);
    });

    it('claims next of the type with the fewest running jobs, so that no type waits behind another', async () => {
      const { store, account } = current();
      for (let i = 0; i < 3; i++) await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { i }, maxAttempts: 1, runAt: later(-5000 + i) });
      const webhook = await store.enqueueJob({ type: 'webhook', ownerId: account.id, payload: {}, maxAttempts: 1 });
      expect((await store.claimJob(['capture', 'webhook'], 'w', LEASE))?.payload).to.deep.equal({ i: 0 });
      expect((await store.claimJob(['capture', 'webhook'], 'w', LEASE))?.id).to.equal(webhook.job.id);
    });

    it('counts a running job whose lease expired as nobody\'s share: its owner is not held back by it', async () => {
      const { store, account, other } = current();
      await store.enqueueJob({ type: 'capture', ownerId: other.id, payload: {}, maxAttempts: 1, runAt: later(-6000) });
      await store.claimJob(['capture'], 'alive', LEASE);
      const dead = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 3, runAt: later(-5000) });
      await store.claimJob(['capture'], 'dead', 30);
      await store.enqueueJob({ type: 'capture', ownerId: other.id, payload: {}, maxAttempts: 1, runAt: later(-4000) });
      await sleep(60);
      // The other account has one job running; the account's only "running" job is a dead holder's.
      expect((await store.claimJob(['capture'], 'alive', LEASE))?.id).to.equal(dead.job.id);
    });

    it('keeps a job\'s group and claims around the groups it is told to leave', async () => {
      const { store, account } = current();
      const slow = await store.enqueueJob({ type: 'webhook', ownerId: account.id, payload: {}, maxAttempts: 1, group: 'slow.example', runAt: later(-5000) });
      const fast = await store.enqueueJob({ type: 'webhook', ownerId: account.id, payload: {}, maxAttempts: 1, group: 'fast.example' });
      const plain = await store.enqueueJob({ type: 'webhook', ownerId: account.id, payload: {}, maxAttempts: 1 });
      expect(slow.job.group).to.equal('slow.example');
      expect(plain.job.group).to.equal(null);
      expect((await store.getJob(fast.job.id))?.group).to.equal('fast.example');
      expect((await store.claimJob(['webhook'], 'w', LEASE, { excludeGroups: ['slow.example'] }))?.id).to.equal(fast.job.id);
      expect((await store.claimJob(['webhook'], 'w', LEASE, { excludeGroups: ['slow.example', 'fast.example'] }))?.id).to.equal(plain.job.id);
      expect(await store.claimJob(['webhook'], 'w', LEASE, { excludeGroups: ['slow.example'] })).to.equal(null);
      expect((await store.claimJob(['webhook'], 'w', LEASE))?.id).to.equal(slow.job.id);
    });

    it('gives each of many concurrent claimers a different job, and every job to exactly one', async () => {
      const { store, account } = current();
      const ids = [];
      for (let i = 0; i < 10; i++) ids.push((await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { i }, maxAttempts: 1 })).job.id);
      const claims = await Promise.all(Array.from({ length: 15 }, (_, i) => store.claimJob(['capture'], `worker-${i}`, LEASE)));
      const taken = claims.filter((job) => job !== null).map((job) => job!.id);
      expect(taken).to.have.length(10);
      expect(new Set(taken)).to.deep.equal(new Set(ids));
    });

    it('lets another worker reclaim a job whose lease expired; the old holder can then neither renew nor complete it', async () => {
      const { store, account } = current();
      const { job } = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 3 });
      await store.claimJob(['capture'], 'dead', 30);
      await sleep(60);
      const reclaimed = await store.claimJob(['capture'], 'alive', LEASE);
      expect(reclaimed).to.deep.include({ id: job.id, lockedBy: 'alive', attempts: 2 });
      expect(await store.renewJobLease(job.id, 'dead', LEASE)).to.equal(false);
      expect(await store.completeJob(job.id, 'dead', { result: { by: 'dead' }, expiresAt: later(1000) })).to.equal(false);
      expect(await store.failJob(job.id, 'dead', 'x', { retryAt: new Date() })).to.equal(false);
      expect((await store.getJob(job.id))?.lockedBy).to.equal('alive');
    });

    it('renews a held lease, so that the job is not reclaimed while its holder works', async () => {
      const { store, account } = current();
      const { job } = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1 });
      await store.claimJob(['capture'], 'w', 80);
      await sleep(40);
      expect(await store.renewJobLease(job.id, 'w', 80)).to.equal(true);
      await sleep(60);
      expect(await store.claimJob(['capture'], 'other', LEASE), 'renewed 60 ms ago for 80 ms').to.equal(null);
    });

    it('completes a job with its result and blob, kept apart from the job itself', async () => {
      const { store, account } = current();
      const { job } = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1 });
      await store.claimJob(['capture'], 'w', LEASE);
      const blob = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]);
      expect(await store.completeJob(job.id, 'w', { result: { width: 10, ok: true }, blob, expiresAt: later(60_000) })).to.equal(true);
      const done = await store.getJob(job.id);
      expect(done).to.deep.include({ state: 'succeeded', lockedBy: null, lockedUntil: null, attempts: 1 });
      expect(done!.result).to.deep.equal({ width: 10, ok: true });
      expect(done!.finishedAt).to.be.instanceOf(Date);
      expect(done!.expiresAt!.getTime()).to.be.greaterThan(Date.now());
      expect(Buffer.compare((await store.getJobBlob(job.id))!, blob)).to.equal(0);
      expect(await store.claimJob(['capture'], 'w', LEASE), 'a finished job is never claimed').to.equal(null);
      expect(await store.completeJob(job.id, 'w', { result: null, expiresAt: later(1) }), 'nor completed twice').to.equal(false);
    });

    it('queues a failed attempt again at its retry time, with the error, and fails it for good when told', async () => {
      const { store, account } = current();
      const { job } = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 2 });
      await store.claimJob(['capture'], 'w', LEASE);
      expect(await store.failJob(job.id, 'w', 'boom 1', { retryAt: later(50) })).to.equal(true);
      const retrying = await store.getJob(job.id);
      expect(retrying).to.deep.include({ state: 'queued', lastError: 'boom 1', attempts: 1, lockedBy: null, finishedAt: null });
      expect(await store.claimJob(['capture'], 'w', LEASE), 'not before its retry time').to.equal(null);
      await sleep(80);
      expect((await store.claimJob(['capture'], 'w', LEASE))?.attempts).to.equal(2);
      expect(await store.failJob(job.id, 'w', 'boom 2', { expiresAt: later(60_000) })).to.equal(true);
      const failed = await store.getJob(job.id);
      expect(failed).to.deep.include({ state: 'failed', lastError: 'boom 2', attempts: 2 });
      expect(failed!.finishedAt).to.be.instanceOf(Date);
      expect(await store.getJobBlob(job.id)).to.equal(null);
    });

    it('replaces the payload of a job that ends, when the outcome gives one, and keeps it otherwise', async () => {
      const { store, account } = current();
      const done = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { secret: 's', keep: 1 }, maxAttempts: 1 });
      await store.claimJob(['capture'], 'w', LEASE);
      await store.completeJob(done.job.id, 'w', { result: null, expiresAt: later(60_000), payload: { keep: 1 } });
      expect((await store.getJob(done.job.id))!.payload).to.deep.equal({ keep: 1 });
      const failed = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { secret: 's', keep: 2 }, maxAttempts: 2 });
      await store.claimJob(['capture'], 'w', LEASE);
      await store.failJob(failed.job.id, 'w', 'boom', { retryAt: later(0) });
      expect((await store.getJob(failed.job.id))!.payload, 'a retry keeps what the next attempt needs').to.deep.equal({ secret: 's', keep: 2 });
      await sleep(20);
      await store.claimJob(['capture'], 'w', LEASE);
      await store.failJob(failed.job.id, 'w', 'boom', { expiresAt: later(60_000), payload: { keep: 2 } });
      expect((await store.getJob(failed.job.id))!.payload).to.deep.equal({ keep: 2 });
      const plain = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: { keep: 3 }, maxAttempts: 1 });
      await store.claimJob(['capture'], 'w', LEASE);
      await store.completeJob(plain.job.id, 'w', { result: null, expiresAt: later(60_000) });
      expect((await store.getJob(plain.job.id))!.payload).to.deep.equal({ keep: 3 });
    });

    it('counts jobs by state, owner and type, and lists an owner\'s recent jobs of a type, newest first', async () => {
      const { store, account, other } = current();
      const a = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1 });
      await sleep(5);
      const b = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1 });
      await store.enqueueJob({ type: 'webhook', ownerId: account.id, payload: {}, maxAttempts: 1 });
      await store.enqueueJob({ type: 'capture', ownerId: other.id, payload: {}, maxAttempts: 1 });
      await store.claimJob(['webhook'], 'w', LEASE);
      expect(await store.countJobs({ ownerId: account.id, type: 'capture', states: ['queued', 'running'] })).to.equal(2);
      expect(await store.countJobs({ ownerId: account.id, states: ['running'] })).to.equal(1);
      expect(await store.countJobs({ type: 'capture', states: ['queued'] })).to.equal(3);
      expect(await store.countJobs({ states: [] })).to.equal(0);
      expect((await store.listJobs(account.id, 'capture', 10)).map((job) => job.id)).to.deep.equal([b.job.id, a.job.id]);
      expect(await store.listJobs(account.id, 'capture', 1)).to.have.length(1);
    });

    it('removes finished jobs past their expiry, and only those', async () => {
      const { store, account } = current();
      const keep = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1 });
      const gone = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1 });
      const queued = await store.enqueueJob({ type: 'capture', ownerId: account.id, payload: {}, maxAttempts: 1 });
      await store.claimJob(['capture'], 'w', LEASE);
      await store.claimJob(['capture'], 'w', LEASE);
      await store.completeJob(keep.job.id, 'w', { result: null, expiresAt: later(60_000) });
      await store.completeJob(gone.job.id, 'w', { result: null, blob: Buffer.from('x'), expiresAt: later(-1) });
      expect(await store.deleteExpiredJobs(new Date())).to.equal(1);
      expect(await store.getJob(gone.job.id)).to.equal(null);
      expect(await store.getJobBlob(gone.job.id)).to.equal(null);
      expect(await store.getJob(keep.job.id)).to.not.equal(null);
      expect(await store.getJob(queued.job.id)).to.not.equal(null);
    });
  });
}
