import { expect } from 'chai';
import type { Job } from '../../../../lib/store/jobs.ts';
import type { MonitorRun } from '../../../../lib/store/monitors.ts';
import type { Account, Store } from '../../../../lib/store/store.ts';
import { expectEventually } from '../../../support/eventually.ts';
import { startLoggingPages } from '../../../support/logging-pages.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../../../support/processes.ts';
import { forEachStoreBackend, type TestStore } from '../../../support/store-backends.ts';

/**
 * Two real API processes (MODE=hosted) on one store (one DATA_DIR: SQLite in WAL mode with a busy
 * timeout, shared by both; or one MongoDB database), a real renderer process with Chromium, and fixture pages that log
 * every request: each scheduled run of a monitor firing every minute happens once across both
 * processes, and a run whose process is SIGKILLed mid-run is run again by the other after the
 * lease, and recorded once. Schedules are real: these tests wait for real minutes.
 */
forEachStoreBackend('page monitors on two API processes sharing one store (real processes, real Chromium)', function (backend) {
  this.timeout(420_000);
  let pages: Awaited<ReturnType<typeof startLoggingPages>>;
  let renderer: ServiceProcess;
  let shared: TestStore | undefined;
  let store: Store;
  let account: Account;
  let key: string;
  let apis: ServiceProcess[] = [];

  const LEASE_MS = 4000;
  const startApi = async () => {
    const api = await startServiceProcess(API_MAIN, {
      MODE: 'hosted',
      ...shared!.env,
      RENDERER_URL: renderer.base,
      JOB_LEASE_MS: String(LEASE_MS),
      JOB_POLL_INTERVAL_MS: '100',
      MONITOR_SCHEDULER_INTERVAL_MS: '250',
      MONITOR_SLOT_SHARE: '50',
    });
    apis.push(api);
    return api;
  };

  before(async () => {
    pages = await startLoggingPages();
    renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2' });
    shared = await backend.create();
    store = shared.store;
    account = await store.createAccount({ name: 'Acme' });
    key = (await store.createKey({ accountId: account.id, name: 'admin', kind: 'full' })).secret;
    await Promise.all([startApi(), startApi()]);
  });
  after(async () => {
    await Promise.all(apis.map((api) => api.stop(5000)));
    await shared?.dispose();
    await renderer?.stop();
    await pages?.close();
  });

  const call = async (api: ServiceProcess, method: string, route: string, body?: object) => {
    const response = await fetch(`${api.base}${route}`, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const live = () => apis.filter((api) => api.child.exitCode === null && api.child.signalCode === null);
  const runsOf = async (api: ServiceProcess, monitorId: string): Promise<Array<Omit<MonitorRun, 'scheduledAt'> & { scheduledAt: string }>> => {
    const response = await call(api, 'GET', `/api/monitors/${monitorId}/runs`);
    expect(response.status).to.equal(200);
    return response.body;
  };
  const runJobs = async (monitorId: string): Promise<Job[]> =>
    (await store.listJobs(account.id, 'monitor-run', 1000)).filter((job) => job.payload.monitorId === monitorId);
  const createMonitor = async (name: string, monitorPages: Array<{ name: string; url: string }>) => {
    const created = await call(live()[0]!, 'POST', '/api/monitors', {
      name,
      schedule: '* * * * *',
      pages: monitorPages.map((page) => ({ ...page, removeAds: false })),
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { id: string };
  };

  it('runs each scheduled run once across both processes: one run per scheduled minute, each page fetched once per run', async () => {
    const monitor = await createMonitor('every-minute', [
      { name: 'home', url: pages.url('pair-home') },
      { name: 'pricing', url: pages.url('pair-pricing') },
    ]);
    try {
      // Two scheduled minutes: up to two minutes and a bit.
      await expectEventually(async () => expect(await runsOf(live()[1]!, monitor.id)).to.have.length.at.least(2), 200_000);
      // Both schedulers keep queueing; give a duplicate time to show up before counting.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const runs = await runsOf(live()[1]!, monitor.id);
      const scheduled = runs.map((run) => run.scheduledAt);
      expect(new Set(scheduled).size, `one run per scheduled time: ${scheduled.join(', ')}`).to.equal(runs.length);
      for (const at of scheduled) expect(new Date(at).getUTCSeconds(), at).to.equal(0);
      for (const run of runs) expect(run.trigger).to.equal('schedule');
      // Loads up to the end of the last recorded run (the next minute's run may have started since).
      const lastFinished = Math.max(...runs.map((run) => new Date(run.finishedAt).getTime()));
      for (const name of ['pair-home', 'pair-pricing']) {
        expect(pages.requests(name).filter((load) => load.start <= lastFinished), name).to.have.length(runs.length);
      }

      const jobs = (await runJobs(monitor.id)).filter((job) => job.state === 'succeeded');
      expect(jobs.map((job) => job.attempts)).to.deep.equal(jobs.map(() => 1));
      expect(new Set(jobs.map((job) => job.payload.scheduledAt))).to.deep.equal(new Set(scheduled));
    } finally {
      expect((await call(live()[0]!, 'DELETE', `/api/monitors/${monitor.id}`)).status).to.equal(200);
    }
  });

  it('runs again, once, a run whose process was SIGKILLed mid-run: the other process takes it after the lease', async () => {
    const monitor = await createMonitor('killed-mid-run', [
      { name: 'fast', url: pages.url('kill-fast') },
      { name: 'slow', url: pages.url('kill-slow', 6000) },
    ]);
    try {
      // The next minute's run, in the middle: its slow page is loading.
      let job: Job | undefined;
      await expectEventually(async () => {
        job = (await runJobs(monitor.id)).find((candidate) => candidate.state === 'running');
        expect(job, 'a running run').to.not.equal(undefined);
        expect(pages.requests('kill-slow'), 'the slow page loading').to.have.length(1);
      }, 120_000);
      const holder = live().find((api) => job!.lockedBy?.split('/')[1] === String(api.child.pid));
      expect(holder, `the process holding ${job!.lockedBy}`).to.not.equal(undefined);
      holder!.child.kill('SIGKILL');
      await new Promise((resolve) => holder!.child.once('exit', resolve));
      const killedAt = Date.now();
      const [survivor] = live();

      await expectEventually(async () => expect((await store.getJob(job!.id))?.state).to.equal('succeeded'), 120_000);
      const retried = (await store.getJob(job!.id))!;
      expect(retried.attempts, 'the killed attempt and the retry').to.equal(2);

      const runs = (await runsOf(survivor!, monitor.id)).filter((run) => run.scheduledAt === job!.payload.scheduledAt);
      expect(runs, 'one run recorded for the scheduled time').to.have.length(1);
      expect(runs[0]!.pages.map((page) => page.outcome)).to.not.include('failed');
      const slow = pages.requests('kill-slow');
      expect(slow, 'the slow page: loaded by the killed attempt, then by the retry').to.have.length.at.least(2);
      expect(slow[1]!.start, 'the retry began after the lease of the killed process').to.be.at.least(killedAt);
    } finally {
      expect((await call(live()[0]!, 'DELETE', `/api/monitors/${monitor.id}`)).status).to.equal(200);
    }
  });
});
