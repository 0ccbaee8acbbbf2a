import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import { errorTranslator } from '../../lib/http/error-translator.ts';
import { createJobRunner } from '../../lib/jobs/runner.ts';
import { createLogger } from '../../lib/logger.ts';
import { openMongoStore } from '../../lib/store/mongo.ts';
import { isStoreUnavailable } from '../../lib/store/unavailable.ts';
import { describeOnMongo } from '../support/store-backends.ts';

const FERRETDB = fileURLToPath(new URL('../cluster/ferretdb.sh', import.meta.url));

/**
 * A MongoDB server that goes away under a running service (issue #44, found on the real node by
 * test/node/faults.test.ts): requests that need the store answer 503 with Retry-After, not a 500,
 * and work again once the server is back. A FerretDB of this test's own (test/cluster/ferretdb.sh,
 * which make test's FerretDB proves built), stopped and started on the same port.
 */
describeOnMongo('store: the MongoDB server stopped and started again', () => {
  const state = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-ferretdb-unreachable-'));
  const up = (port?: string) => {
    const started = spawnSync(FERRETDB, ['up', state], { env: { ...process.env, ...(port ? { FERRETDB_PORT: port } : {}) }, encoding: 'utf8' });
    const last = started.stdout.trim().split('\n').at(-1) ?? '';
    if (started.status !== 0 || !last.startsWith('MONGODB_URI=')) throw new Error(`ferretdb.sh up failed:\n${started.stdout}${started.stderr}`);
    return last.slice('MONGODB_URI='.length);
  };
  let uri: string;
  let store: Awaited<ReturnType<typeof openMongoStore>>;
  let server: ReturnType<Koa['listen']>;
  let base: string;

  before(async function () {
    this.timeout(120_000);
    uri = up();
    store = await openMongoStore({ uri, dbName: 'viewfinder_unreachable' });
    const app = new Koa();
    app.use(errorTranslator(createLogger({ level: 'silent' }), 1024));
    app.use(async (ctx) => {
      ctx.body = { sites: await store.listSites('acct_none') };
    });
    server = app.listen(0, '127.0.0.1');
    // Longer than the test: a kept-alive connection the server closed meanwhile would fail a fetch.
    server.keepAliveTimeout = 120_000;
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async function () {
    this.timeout(60_000);
    server?.close();
    await store?.close().catch(() => undefined);
    spawnSync(FERRETDB, ['down', state, '--wipe']);
  });

  it('answers 503 with Retry-After while the server is down, and 200 once it is back on the same address', async function () {
    this.timeout(120_000);
    expect((await fetch(`${base}/`)).status).to.equal(200);
    const halted = spawnSync(FERRETDB, ['down', state], { encoding: 'utf8' });
    expect(halted.status, halted.stderr).to.equal(0);
    // The client's own timeout: an answer arrives within it, the request does not hang.
    const refused = await fetch(`${base}/`, { signal: AbortSignal.timeout(60_000) });
    expect(refused.status).to.equal(503);
    expect(refused.headers.get('retry-after')).to.equal('5');
    expect(await refused.json()).to.deep.equal({ success: false, error: 'The store is unreachable; try again shortly' });
    // What the store threw is recognised as such, not as any 5xx.
    const thrown = await store.listSites('acct_none').then(() => null, (err: unknown) => err);
    expect(isStoreUnavailable(thrown), String(thrown)).to.equal(true);
    up(new URL(uri).port);
    let back = 0;
    for (const deadline = Date.now() + 60_000; back !== 200 && Date.now() < deadline; ) {
      back = (await fetch(`${base}/`, { signal: AbortSignal.timeout(60_000) })).status;
      if (back !== 200) expect(back).to.equal(503);
    }
    expect(back).to.equal(200);
  });

  it("runs a job once when the server is away as its outcome is written: the outcome waits for the store, within the lease", async function () {
    this.timeout(120_000);
    const LEASE_MS = 6000;
    let runs = 0;
    let finish: () => void = () => undefined;
    const runner = createJobRunner({ store, logger: createLogger({ level: 'silent' }), concurrency: 2, leaseMs: LEASE_MS, pollIntervalMs: 100 });
    const started = new Promise<void>((resolveStarted) => {
      runner.register({
        type: 'slow',
        retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 100 },
        retentionMs: 60_000,
        run: () => {
          runs += 1;
          if (runs > 1) return Promise.resolve({ result: { again: true } }); // the run this test says must not happen
          resolveStarted();
          return new Promise((resolve) => (finish = () => resolve({ result: { done: true } })));
        },
      });
    });
    runner.start();
    try {
      const { job } = await runner.enqueue('slow', 'acct_jobs', {});
      await started;
      // The server goes away while the job runs, and the job finishes meanwhile.
      expect(spawnSync(FERRETDB, ['down', state]).status).to.equal(0);
      finish();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      up(new URL(uri).port);
      let jobState = '';
      for (const deadline = Date.now() + 30_000; jobState !== 'succeeded' && Date.now() < deadline; ) {
        jobState = (await store.getJob(job.id).catch(() => null))?.state ?? '';
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // Past the lease: a job left running in the store would have been claimed and run again by now.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 2000));
      const done = await store.getJob(job.id);
      expect([done?.state, done?.attempts, runs]).to.deep.equal(['succeeded', 1, 1]);
    } finally {
      await runner.stop(1000);
    }
  });

  it('keeps any other failure a 500', () => {
    expect(isStoreUnavailable(new Error('buffering timed out'))).to.equal(false);
    expect(isStoreUnavailable(Object.assign(new Error('E11000 duplicate key'), { name: 'MongoServerError' }))).to.equal(false);
  });
});
