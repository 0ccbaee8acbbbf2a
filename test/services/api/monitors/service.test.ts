import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { BlobStore } from '../../../../lib/blobs/blob-store.ts';
import { openDirectoryBlobStore } from '../../../../lib/blobs/directory-blob-store.ts';
import { createJobRunner, type JobRunner } from '../../../../lib/jobs/runner.ts';
import type { MonitorRun, MonitorSpec } from '../../../../lib/store/monitors.ts';
import { openStore } from '../../../../lib/store/open.ts';
import type { Account, Store } from '../../../../lib/store/store.ts';
import type { MonitorsConfig } from '../../../../services/api/src/monitors/config.ts';
import { monitorImagesIn, type MonitorImages } from '../../../../services/api/src/monitors/images.ts';
import { runMonitor } from '../../../../services/api/src/monitors/run.ts';
import { startMonitorService, type MonitorService } from '../../../../services/api/src/monitors/service.ts';
import { monitorSlots } from '../../../../services/api/src/monitors/slots.ts';
import type { Renderer } from '../../../../services/renderer/src/renderer.ts';
import { waitFor } from '../../../operator/support.ts';
import { silentLogger, startRenderer, testConfig } from '../../../support/harness.ts';

/**
 * Monitor runs end to end on one process: real Chromium captures pages this test serves and
 * changes, the diff engine compares them, the embedded store records runs, pictures go to files.
 * Then two schedulers on one store (two connections, as two API replicas have) run a scheduled run once.
 */
describe('page monitor runs (real Chromium, embedded store)', function () {
  this.timeout(300_000);
  let server: http.Server;
  let origin: string;
  let renderer: Renderer;
  let dataDir: string;
  const pages = { banner: 'Welcome', clock: 0 };
  const held = { hits: 0, waiting: [] as Array<() => void> };

  const html = (body: string) => `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title>
<style>body{margin:0;font:18px sans-serif} .box{width:400px;height:100px;margin:20px} #clock{position:absolute;left:900px;top:10px;width:200px;height:30px}</style></head><body>${body}</body></html>`;

  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      if (req.url === '/held') {
        held.hits += 1;
        // The first load is held open until the test lets it go: the monitor's capture is in flight.
        if (held.hits === 1) return void held.waiting.push(() => res.end(html('<h1>Held</h1>')));
        return res.end(html('<h1>Held</h1>'));
      }
      if (req.url === '/home') {
        pages.clock += 1;
        return res.end(html(`<h1>Home</h1><div class="box" style="background:#0057b8"></div><div id="clock">${pages.clock}:00</div>`));
      }
      return res.end(html(`<h1>Offers</h1><div class="box" style="background:${pages.banner === 'Welcome' ? '#2a9d8f' : '#e76f51'}">${pages.banner}</div>`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    renderer = await startRenderer(testConfig({ RENDER_CONCURRENCY: '2' }));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  let store: Store;
  let blobs: BlobStore;
  let images: MonitorImages;
  /** The pictures the blob store holds now. */
  const storedImages = async () => {
    const keys: string[] = [];
    for await (const { key } of blobs.list('monitor-images/')) keys.push(key);
    return keys;
  };
  let runner: JobRunner;
  let service: MonitorService;
  let account: Account;
  const config: MonitorsConfig = { images: { blobs: { kind: 'directory', dir: '' }, legacy: { backend: 'disk', dir: '' } }, slotSharePercent: 50, schedulerIntervalMs: 100, runConcurrency: 1 };

  beforeEach(async () => {
    pages.banner = 'Welcome';
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'viewfinder-monitors-'));
    store = await openStore({ backend: 'sqlite', dataDir, busyTimeoutMs: 5000 });
    blobs = await openDirectoryBlobStore({ dir: path.join(dataDir, 'blobs') });
    images = monitorImagesIn(blobs);
    runner = createJobRunner({ store, logger: silentLogger, concurrency: 2, leaseMs: 30_000, pollIntervalMs: 50 });
    service = startMonitorService({ store, renderer, images, runner, config, logger: silentLogger });
    runner.start();
    account = await store.createAccount({ name: 'Shop' });
  });
  afterEach(async () => {
    service.stop();
    await runner.stop(1000);
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const spec = (overrides: Partial<MonitorSpec> = {}): MonitorSpec => ({
    name: 'storefront',
    siteId: null,
    schedule: '0 0 1 1 *',
    timeZone: 'UTC',
    suspend: false,
    historyLimit: 10,
    compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
    pages: [
      { name: 'home', url: `${origin}/home`, hideSelectors: ['#clock'], removeAds: false },
      { name: 'offers', url: `${origin}/offers`, removeAds: false },
    ],
    ...overrides,
  });

  /** Runs the monitor now and answers the run once recorded. */
  async function runNow(monitorId: string): Promise<MonitorRun> {
    const newest = async () => (await store.listMonitorRuns(monitorId, 1))[0];
    const before = (await newest())?.id;
    await service.runNow((await store.getMonitor(monitorId))!);
    return waitFor('the run to be recorded', async () => {
      const run = await newest();
      return run !== undefined && run.id !== before && run;
    }, 1200, 100);
  }
  const page = (run: MonitorRun, name: string) => run.pages.find((result) => result.page === name)!;

  it('takes the baselines, finds a change on the page that changed with about the right ratio and box, the other at 0', async () => {
    const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
    const first = await runNow(monitor.id);
    expect(first.pages.map((result) => result.outcome)).to.deep.equal(['baseline', 'baseline']);
    expect(Object.keys((await store.getMonitor(monitor.id))!.baselines).sort()).to.deep.equal(['home', 'offers']);

    pages.banner = 'Sale!';
    const second = await runNow(monitor.id);
    expect(page(second, 'home')).to.deep.include({ outcome: 'unchanged', diffRatio: 0, error: null });
    const offers = page(second, 'offers');
    expect(offers.outcome).to.equal('changed');
    // The 400 x 100 box changed colour (and its text): about 40 000 of the 1280 x 720 pixels.
    expect(offers.diffRatio).to.be.within(0.035, 0.05);
    expect(offers.regions[0]).to.deep.include({ left: 20 });
    expect(offers.regions[0]?.width).to.be.within(395, 401);
    const diff = await images.get(offers.diffImageId!);
    expect(diff?.subarray(1, 4).toString()).to.equal('PNG');

    // accepted: the baseline stays the first picture until accepted, then the change is the new normal.
    expect(page(await runNow(monitor.id), 'offers').outcome).to.equal('changed');
    await service.acceptBaseline((await store.getMonitor(monitor.id))!, second.id, 'offers');
    expect(page(await runNow(monitor.id), 'offers')).to.deep.include({ outcome: 'unchanged', diffRatio: 0 });
  });

  it('keeps at most one pending run-now per monitor: thirty calls at once queue one run, and the next call after it queues another', async () => {
    const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
    const ids = await Promise.all(Array.from({ length: 30 }, async () => service.runNow((await store.getMonitor(monitor.id))!)));
    expect(new Set(ids).size, 'every call answers the one pending run').to.equal(1);
    expect(await store.countJobs({ ownerId: account.id, type: 'monitor-run', states: ['queued', 'running', 'succeeded', 'failed'] })).to.equal(1);
    await waitFor('the run to finish', async () => (await store.getJob(ids[0]!))?.state === 'succeeded', 1200, 100);
    const next = await service.runNow((await store.getMonitor(monitor.id))!);
    expect(next).to.not.equal(ids[0]);
    expect(await service.runNow((await store.getMonitor(monitor.id))!)).to.equal(next);
  });

  it('with baseline: previous, compares with the last run', async () => {
    const monitor = await store.createMonitor({ accountId: account.id, ...spec({ compare: { threshold: 0.001, baseline: 'previous', pixelTolerance: 0.1 } }) });
    await runNow(monitor.id);
    pages.banner = 'Sale!';
    expect(page(await runNow(monitor.id), 'offers').outcome).to.equal('changed');
    expect(page(await runNow(monitor.id), 'offers')).to.deep.include({ outcome: 'unchanged', diffRatio: 0 });
  });

  it('keeps historyLimit runs and deletes the pictures only older runs named; deleting the monitor deletes the rest', async () => {
    const monitor = await store.createMonitor({ accountId: account.id, ...spec({ historyLimit: 2, pages: [spec().pages[1]!] }) });
    const first = await runNow(monitor.id);
    await runNow(monitor.id);
    const third = await runNow(monitor.id);
    const runs = await store.listMonitorRuns(monitor.id, 10);
    expect(runs.map((run) => run.id)).to.have.length(2).and.include(third.id);
    const baseline = page(first, 'offers').captureImageId!;
    expect(await images.get(baseline), 'the baseline outlives its run').to.not.equal(null);
    const files = await storedImages();
    // Two kept runs with a capture and a diff each, and the baseline.
    expect(files).to.have.length(5);
    await service.deleteMonitor((await store.getMonitor(monitor.id))!);
    expect(await storedImages()).to.deep.equal([]);
    expect(await store.listMonitorRuns(monitor.id, 10)).to.deep.equal([]);
  });

  it('records a failed page with the renderer’s reason and still runs the others', async () => {
    const monitor = await store.createMonitor({
      accountId: account.id,
      ...spec({ pages: [{ name: 'gone', url: 'http://127.0.0.1:9/', removeAds: false }, spec().pages[1]!] }),
    });
    const run = await runNow(monitor.id);
    expect(page(run, 'gone')).to.deep.include({ outcome: 'failed', captureImageId: null, report: null, verdict: null });
    expect(page(run, 'gone').error).to.match(/ERR_CONNECTION_REFUSED|failed/i);
    expect(page(run, 'offers').outcome).to.equal('baseline');
    // Every run records the report, checks or not; without checks there is no verdict.
    expect(page(run, 'offers').report?.document.status).to.equal(200);
    expect(page(run, 'offers').verdict).to.equal(null);
  });

  it('refuses a page outside its site’s allowed domains without capturing it', async () => {
    const site = await store.createSite({ accountId: account.id, name: 'Shop', allowedDomains: ['shop.example'] });
    const monitor = await store.createMonitor({ accountId: account.id, ...spec({ siteId: site.id, pages: [spec().pages[1]!] }) });
    const run = await runNow(monitor.id);
    expect(page(run, 'offers')).to.deep.include({ outcome: 'failed', captureImageId: null });
    expect(page(run, 'offers').error).to.match(/127\.0\.0\.1 is not among the allowed domains/);
  });

  it('records a run once when two attempts of its job both finish (a lease lost mid-run): the later one’s pictures go', async () => {
    const monitor = await store.createMonitor({ accountId: account.id, ...spec({ pages: [spec().pages[1]!] }) });
    const deps = { store, renderer, images, slots: monitorSlots(renderer, 50), logger: silentLogger };
    const request = { runId: 'run_00000000000000000000abcd', trigger: 'schedule' as const, scheduledAt: new Date() };
    const first = await runMonitor(deps, monitor, request);
    const second = await runMonitor(deps, (await store.getMonitor(monitor.id))!, request);
    expect(second).to.deep.equal(first);
    expect((await store.listMonitorRuns(monitor.id, 10)).map((run) => run.id)).to.deep.equal([request.runId]);
    // The first attempt's capture (now the baseline); the second's capture and diff were deleted.
    expect(await storedImages()).to.have.length(1);
  });

  it('drops a monitor capture when a client capture comes, and takes it again once the tier is quiet', async () => {
    held.hits = 0;
    const monitor = await store.createMonitor({ accountId: account.id, ...spec({ pages: [{ name: 'held', url: `${origin}/held`, removeAds: false }] }) });
    const running = runNow(monitor.id);
    await waitFor('the monitor capture in flight', async () => held.hits === 1, 600, 50);
    // A client capture: with 2 slots and a 50 % share, the monitor's capture must yield.
    const client = await renderer.capture({ url: `${origin}/offers`, quality: 'standard', fullPage: false, removeAds: false });
    expect(client.image.length).to.be.above(0);
    const run = await running;
    held.waiting.splice(0).forEach((answer) => answer());
    expect(page(run, 'held')).to.include({ outcome: 'baseline', error: null });
    expect(held.hits, 'loaded again after the client capture').to.equal(2);
  });

  it('two schedulers on one store (two API replicas) run each scheduled run once', async () => {
    const second = {
      store: await openStore({ backend: 'sqlite', dataDir, busyTimeoutMs: 5000 }),
    };
    const secondRunner = createJobRunner({ store: second.store, logger: silentLogger, concurrency: 2, leaseMs: 30_000, pollIntervalMs: 50 });
    const secondService = startMonitorService({ store: second.store, renderer, images, runner: secondRunner, config, logger: silentLogger });
    secondRunner.start();
    try {
      const monitor = await store.createMonitor({ accountId: account.id, ...spec({ schedule: '* * * * *', pages: [spec().pages[1]!] }) });
      // The next minute's run, queued by both schedulers every 100 ms until it is due.
      await waitFor('the scheduled run', async () => (await store.listMonitorRuns(monitor.id, 10)).length > 0, 1000, 100);
      const scheduledAt = (await store.listMonitorRuns(monitor.id, 1))[0]!.scheduledAt;
      expect(scheduledAt.getUTCSeconds()).to.equal(0);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const runs = (await store.listMonitorRuns(monitor.id, 10)).filter((run) => run.scheduledAt.getTime() === scheduledAt.getTime());
      expect(runs).to.have.length(1);
      expect(await store.countJobs({ ownerId: account.id, type: 'monitor-run', states: ['succeeded', 'running', 'queued', 'failed'] })).to.be.at.most(2);
    } finally {
      secondService.stop();
      await secondRunner.stop(1000);
      await second.store.close();
    }
  });
});
