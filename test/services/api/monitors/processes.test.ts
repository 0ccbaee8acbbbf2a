import { expect } from 'chai';
import type { Job } from '../../../../lib/store/jobs.ts';
import type { MonitorRun } from '../../../../lib/store/monitors.ts';
import type { Account, Store } from '../../../../lib/store/store.ts';
import { expectEventually } from '../../../support/eventually.ts';
import { startLoggingPages } from '../../../support/logging-pages.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../../../support/processes.ts';
import { MONGODB_URI, NO_MONGODB, mongo, sqlite, type StoreBackend, type TestStore } from '../../../support/store-backends.ts';

/**
 * Two real API processes (MODE=hosted) on one store (one DATA_DIR: SQLite in WAL mode with a busy
 * timeout, shared by both; or one MongoDB database), a real renderer process with Chromium, and fixture pages that log
 * every request: each scheduled run of a monitor firing every minute happens once across both
 * processes, and a run whose process is SIGKILLed mid-run is run again by the other after the
 * lease, and recorded once. Schedules are real: these tests wait for real minutes.
 */

/** One backend's side of the test: its store, its renderer and its two API processes. */
interface Side {
  name: string;
  /** Page names are prefixed with it: both sides share one page server. */
  tag: string;
  shared: TestStore;
  store: Store;
  account: Account;
  key: string;
  renderer: ServiceProcess;
  apis: ServiceProcess[];
}

/**
 * Both backends at once, each with processes of its own: the tests wait for real minutes, and
 * running the backends one after the other would wait for those minutes twice. Each test runs its
 * scenario on every side in parallel and fails naming the side that failed.
 */
describe('page monitors on two API processes sharing one store (real processes, real Chromium), on embedded SQLite and on MongoDB side by side', function () {
  this.timeout(420_000);
  const backends: StoreBackend[] = [sqlite, ...(MONGODB_URI ? [mongo(MONGODB_URI)] : [])];
  let pages: Awaited<ReturnType<typeof startLoggingPages>>;
  const sides: Side[] = [];

  const LEASE_MS = 4000;
  const startApi = async (side: Side) => {
    const api = await startServiceProcess(API_MAIN, {
      MODE: 'hosted',
      ...side.shared.env,
      RENDERER_URL: side.renderer.base,
      JOB_LEASE_MS: String(LEASE_MS),
      JOB_POLL_INTERVAL_MS: '100',
      MONITOR_SCHEDULER_INTERVAL_MS: '250',
      MONITOR_SLOT_SHARE: '50',
    });
    side.apis.push(api);
    return api;
  };
  const startSide = async (backend: StoreBackend): Promise<void> => {
    const shared = await backend.create();
    const account = await shared.store.createAccount({ name: 'Acme' });
    const key = (await shared.store.createKey({ accountId: account.id, name: 'admin', kind: 'full' })).secret;
    const renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2' });
    const side: Side = { name: backend.name, tag: backend === sqlite ? 'sqlite' : 'mongo', shared, store: shared.store, account, key, renderer, apis: [] };
    sides.push(side);
    await Promise.all([startApi(side), startApi(side)]);
  };

  before(async () => {
    pages = await startLoggingPages();
    await Promise.all(backends.map(startSide));
  });
  after(async () => {
    await Promise.all(sides.flatMap((side) => side.apis.map((api) => api.stop(5000))));
    await Promise.all(sides.map(async (side) => (await side.shared.dispose(), await side.renderer.stop())));
    await pages?.close();
  });

  /** Runs the scenario on every side at once; the first side that failed fails the test, named. */
  const onEverySide = async (scenario: (side: Side) => Promise<void>) => {
    const outcomes = await Promise.allSettled(sides.map(scenario));
    outcomes.forEach((outcome, index) => {
      if (outcome.status === 'rejected') {
        const err = outcome.reason as Error;
        err.message = `on ${sides[index]!.name}: ${err.message}`;
        throw err;
      }
    });
  };

  if (!MONGODB_URI) {
    it('on MongoDB is skipped: no MongoDB server (MONGODB_URI)', function () {
      console.log(`      (skipped: ${NO_MONGODB})`);
      this.skip();
    });
  }

  const call = async (side: Side, api: ServiceProcess, method: string, route: string, body?: object) => {
    const response = await fetch(`${api.base}${route}`, {
      method,
      headers: { 'x-api-key': side.key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const live = (side: Side) => side.apis.filter((api) => api.child.exitCode === null && api.child.signalCode === null);
  const runsOf = async (side: Side, api: ServiceProcess, monitorId: string): Promise<Array<Omit<MonitorRun, 'scheduledAt'> & { scheduledAt: string }>> => {
    const response = await call(side, api, 'GET', `/api/monitors/${monitorId}/runs`);
    expect(response.status).to.equal(200);
    return response.body;
  };
  const runJobs = async (side: Side, monitorId: string): Promise<Job[]> =>
    (await side.store.listJobs(side.account.id, 'monitor-run', 1000)).filter((job) => job.payload.monitorId === monitorId);
  const createMonitor = async (side: Side, name: string, monitorPages: Array<{ name: string; url: string }>) => {
    const created = await call(side, live(side)[0]!, 'POST', '/api/monitors', {
      name,
      schedule: '* * * * *',
      pages: monitorPages.map((page) => ({ ...page, removeAds: false })),
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { id: string };
  };

  it('runs each scheduled run once across both processes: one run per scheduled minute, each page fetched once per run', () =>
    onEverySide(async (side) => {
      const page = (name: string) => `${side.tag}-${name}`;
      const monitor = await createMonitor(side, 'every-minute', [
        { name: 'home', url: pages.url(page('pair-home')) },
        { name: 'pricing', url: pages.url(page('pair-pricing')) },
      ]);
      try {
        // Two scheduled minutes: up to two minutes and a bit.
        await expectEventually(async () => expect(await runsOf(side, live(side)[1]!, monitor.id)).to.have.length.at.least(2), 200_000);
        // Both schedulers keep queueing; give a duplicate time to show up before counting.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const runs = await runsOf(side, live(side)[1]!, monitor.id);
        const scheduled = runs.map((run) => run.scheduledAt);
        expect(new Set(scheduled).size, `one run per scheduled time: ${scheduled.join(', ')}`).to.equal(runs.length);
        for (const at of scheduled) expect(new Date(at).getUTCSeconds(), at).to.equal(0);
        for (const run of runs) expect(run.trigger).to.equal('schedule');
        // Loads up to the end of the last recorded run (the next minute's run may have started since).
        const lastFinished = Math.max(...runs.map((run) => new Date(run.finishedAt).getTime()));
        for (const name of [page('pair-home'), page('pair-pricing')]) {
          expect(pages.requests(name).filter((load) => load.start <= lastFinished), name).to.have.length(runs.length);
        }

        const jobs = (await runJobs(side, monitor.id)).filter((job) => job.state === 'succeeded');
        expect(jobs.map((job) => job.attempts)).to.deep.equal(jobs.map(() => 1));
        expect(new Set(jobs.map((job) => job.payload.scheduledAt))).to.deep.equal(new Set(scheduled));
      } finally {
        expect((await call(side, live(side)[0]!, 'DELETE', `/api/monitors/${monitor.id}`)).status).to.equal(200);
      }
    }));

  it('runs again, once, a run whose process was SIGKILLed mid-run: the other process takes it after the lease', () =>
    onEverySide(async (side) => {
      const page = (name: string) => `${side.tag}-${name}`;
      const monitor = await createMonitor(side, 'killed-mid-run', [
        { name: 'fast', url: pages.url(page('kill-fast')) },
        { name: 'slow', url: pages.url(page('kill-slow'), 6000) },
      ]);
      try {
        // The next minute's run, in the middle: its slow page is loading.
        let job: Job | undefined;
        await expectEventually(async () => {
          job = (await runJobs(side, monitor.id)).find((candidate) => candidate.state === 'running');
          expect(job, 'a running run').to.not.equal(undefined);
          expect(pages.requests(page('kill-slow')), 'the slow page loading').to.have.length(1);
        }, 120_000);
        const holder = live(side).find((api) => job!.lockedBy?.split('/')[1] === String(api.child.pid));
        expect(holder, `the process holding ${job!.lockedBy}`).to.not.equal(undefined);
        holder!.child.kill('SIGKILL');
        await new Promise((resolve) => holder!.child.once('exit', resolve));
        const killedAt = Date.now();
        const [survivor] = live(side);

        await expectEventually(async () => expect((await side.store.getJob(job!.id))?.state).to.equal('succeeded'), 120_000);
        const retried = (await side.store.getJob(job!.id))!;
        expect(retried.attempts, 'the killed attempt and the retry').to.equal(2);

        const runs = (await runsOf(side, survivor!, monitor.id)).filter((run) => run.scheduledAt === job!.payload.scheduledAt);
        expect(runs, 'one run recorded for the scheduled time').to.have.length(1);
        expect(runs[0]!.pages.map((result) => result.outcome)).to.not.include('failed');
        const slow = pages.requests(page('kill-slow'));
        expect(slow, 'the slow page: loaded by the killed attempt, then by the retry').to.have.length.at.least(2);
        expect(slow[1]!.start, 'the retry began after the lease of the killed process').to.be.at.least(killedAt);
      } finally {
        expect((await call(side, live(side)[0]!, 'DELETE', `/api/monitors/${monitor.id}`)).status).to.equal(200);
      }
    }));
});
