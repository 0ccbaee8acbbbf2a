import { expect } from 'chai';
import { Conflict } from '../../lib/errors.ts';
import type { MonitorSpec, NewMonitorRun } from '../../lib/store/monitors.ts';
import type { Account, Store } from '../../lib/store/store.ts';

/** Page monitors and their runs: part of the store conformance suite (conformance.ts calls this inside its own setup). */
export function monitorStoreConformance(current: () => { store: Store; account: Account; other: Account }): void {
  const spec = (overrides: Partial<MonitorSpec> = {}): MonitorSpec => ({
    name: 'storefront',
    siteId: null,
    schedule: '*/5 * * * *',
    timeZone: 'UTC',
    suspend: false,
    historyLimit: 10,
    compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
    pages: [
      { name: 'home', url: 'https://example.com/', ignoreRegions: [{ left: 0, top: 0, width: 10, height: 10 }] },
      { name: 'pricing', url: 'https://example.com/pricing', fullPage: true, hideSelectors: ['.clock'] },
    ],
    ...overrides,
  });
  const runOf = (monitorId: string, finishedAt: Date, outcome: 'changed' | 'unchanged' = 'unchanged'): NewMonitorRun => ({
    monitorId,
    trigger: 'schedule',
    scheduledAt: finishedAt,
    startedAt: finishedAt,
    finishedAt,
    pages: [{ page: 'home', outcome, diffRatio: outcome === 'changed' ? 0.2 : 0, regions: [{ left: 1, top: 2, width: 3, height: 4 }], captureImageId: 'img_1', diffImageId: 'img_2', baselineImageId: 'img_0', error: null, report: null, verdict: null, journey: null }],
  });

  describe('monitors', () => {
    it('creates a monitor with its spec, generation 1 and no baselines, and reads it back', async () => {
      const { store, account } = current();
      const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
      expect(monitor.id).to.match(/^mon_[0-9a-f]{24}$/);
      expect(monitor).to.deep.include({ accountId: account.id, ...spec(), managedBy: null, baselines: {}, generation: 1 });
      expect(monitor.scheduleStartedAt).to.be.instanceOf(Date);
      expect(await store.getMonitor(monitor.id)).to.deep.equal(monitor);
      expect(await store.getMonitor('mon_missing')).to.equal(null);
    });

    it('keeps names unique per account and scope: the same name in another account or namespace is fine', async () => {
      const { store, account, other } = current();
      await store.createMonitor({ accountId: account.id, ...spec() });
      const err = await store.createMonitor({ accountId: account.id, ...spec() }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Conflict);
      await store.createMonitor({ accountId: other.id, ...spec() });
      await store.createMonitor({ accountId: account.id, ...spec(), managedBy: { kind: 'PageMonitor', namespace: 'shop', name: 'storefront', uid: 'u1' } });
      expect((await store.listMonitors(account.id)).map((m) => m.managedBy?.namespace ?? null)).to.deep.equal([null, 'shop']);
      expect((await store.listAllMonitors()).filter((m) => m.name === 'storefront')).to.have.length(3);
    });

    it('finds a monitor by its owner (kind/namespace/name) across accounts, and allows one monitor per owner', async () => {
      const { store, account, other } = current();
      const owner = { kind: 'PageMonitor', namespace: 'shop', name: 'storefront', uid: 'u1' } as const;
      await store.createMonitor({ accountId: account.id, ...spec() });
      const owned = await store.createMonitor({ accountId: other.id, ...spec(), managedBy: owner });
      expect(await store.findMonitorByManagedBy({ kind: 'PageMonitor', namespace: 'shop', name: 'storefront' })).to.deep.equal(owned);
      expect(await store.findMonitorByManagedBy({ kind: 'PageMonitor', namespace: 'other', name: 'storefront' })).to.equal(null);
      expect(await store.findMonitorByManagedBy({ kind: 'PageMonitor', namespace: 'shop', name: 'blog' })).to.equal(null);
      expect(await store.findMonitorByManagedBy({ kind: 'Site', namespace: 'shop', name: 'storefront' })).to.equal(null);

      const err = await store.createMonitor({ accountId: account.id, ...spec({ name: 'renamed' }), managedBy: { ...owner, uid: 'u2' } }).catch((e: unknown) => e);
      expect(err, 'a second monitor for the same PageMonitor').to.be.instanceOf(Conflict);
      expect((await store.listMonitors(account.id)).map((m) => m.name)).to.deep.equal(['storefront']);

      await store.deleteMonitor(owned.id);
      expect(await store.findMonitorByManagedBy(owner)).to.equal(null);
    });

    it('updates: raises the generation, restarts the schedule only when it changes, drops baselines of removed pages', async () => {
      const { store, account } = current();
      const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
      await store.setMonitorBaseline(monitor.id, 'home', 'img_home');
      const withBaselines = await store.setMonitorBaseline(monitor.id, 'pricing', 'img_pricing');
      expect(withBaselines?.baselines).to.deep.equal({ home: 'img_home', pricing: 'img_pricing' });
      expect(withBaselines?.generation, 'a baseline is not a spec change').to.equal(1);

      await new Promise((resolve) => setTimeout(resolve, 5));
      const thresholds = await store.updateMonitor(monitor.id, { compare: { threshold: 0.05, baseline: 'previous', pixelTolerance: 0 } });
      expect(thresholds).to.deep.include({ generation: 2, compare: { threshold: 0.05, baseline: 'previous', pixelTolerance: 0 } });
      expect(thresholds?.scheduleStartedAt.getTime()).to.equal(monitor.scheduleStartedAt.getTime());

      const rescheduled = await store.updateMonitor(monitor.id, { schedule: '@hourly', pages: [spec().pages[0] as MonitorSpec['pages'][number]] });
      expect(rescheduled).to.deep.include({ generation: 3, schedule: '@hourly', baselines: { home: 'img_home' } });
      expect(rescheduled?.scheduleStartedAt.getTime()).to.be.greaterThan(monitor.scheduleStartedAt.getTime());
      expect(await store.updateMonitor('mon_missing', { suspend: true })).to.equal(null);
    });

    it('refuses a rename onto another monitor’s name', async () => {
      const { store, account } = current();
      await store.createMonitor({ accountId: account.id, ...spec() });
      const blog = await store.createMonitor({ accountId: account.id, ...spec({ name: 'blog' }) });
      const err = await store.updateMonitor(blog.id, { name: 'storefront' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Conflict);
      expect((await store.getMonitor(blog.id))?.name).to.equal('blog');
    });

    it('records runs, lists them newest first with a limit, and deletes them by id', async () => {
      const { store, account } = current();
      const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
      const first = await store.recordMonitorRun(runOf(monitor.id, new Date(1_000_000), 'unchanged'));
      const second = await store.recordMonitorRun(runOf(monitor.id, new Date(2_000_000), 'changed'));
      expect(first.id).to.match(/^run_[0-9a-f]{24}$/);
      expect(await store.getMonitorRun(second.id)).to.deep.equal(second);
      expect((await store.listMonitorRuns(monitor.id, 10)).map((run) => run.id)).to.deep.equal([second.id, first.id]);
      expect((await store.listMonitorRuns(monitor.id, 1)).map((run) => run.id)).to.deep.equal([second.id]);
      await store.deleteMonitorRuns([second.id]);
      expect((await store.listMonitorRuns(monitor.id, 10)).map((run) => run.id)).to.deep.equal([first.id]);
      expect(await store.getMonitorRun('run_missing')).to.equal(null);
    });

    it('records a run under a given id once: a second record of that id answers the first and changes nothing', async () => {
      const { store, account } = current();
      const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
      const first = await store.recordMonitorRun({ ...runOf(monitor.id, new Date(1_000_000), 'unchanged'), id: 'run_0123456789abcdef01234567' });
      expect(first.id).to.equal('run_0123456789abcdef01234567');
      const again = await store.recordMonitorRun({ ...runOf(monitor.id, new Date(2_000_000), 'changed'), id: first.id });
      expect(again).to.deep.equal(first);
      expect(await store.listMonitorRuns(monitor.id, 10)).to.deep.equal([first]);
    });

    it("keeps a page's report, verdict and journey as recorded, and reads a run recorded before them (no such fields) as null", async () => {
      const { store, account } = current();
      const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
      const verdict = { failing: true, failures: [{ check: 'maxConsoleErrors', measured: 2, bound: 0, message: '2 console errors, at most 0 allowed' }], passed: ['status'] };
      const report = { document: { url: 'https://example.com/', status: 200, redirects: [] }, loadTimeMs: 120 } as unknown as NonNullable<NewMonitorRun['pages'][number]['report']>;
      // Issue #41: a journey that stopped at its second step, with the picture of that moment.
      const journey = {
        steps: [
          { action: 'fill' as const, selector: '#user', status: 'ok' as const, durationMs: 12 },
          { action: 'click' as const, selector: '#go', status: 'failed' as const, durationMs: 5000, reason: 'timeout' as const },
        ],
        failedStep: 1,
        failureImageId: 'img_3',
      };
      const judged = await store.recordMonitorRun({ ...runOf(monitor.id, new Date(1_000_000)), pages: [{ ...runOf(monitor.id, new Date()).pages[0]!, report, verdict, journey }] });
      expect((await store.getMonitorRun(judged.id))?.pages[0]).to.deep.include({ report, verdict, journey });
      // As a row or document written before issues #40 and #41 holds it: the page without these fields.
      const { report: _r, verdict: _v, journey: _j, ...older } = runOf(monitor.id, new Date()).pages[0]!;
      const old = await store.recordMonitorRun({ ...runOf(monitor.id, new Date(2_000_000)), pages: [older as NewMonitorRun['pages'][number]] });
      expect((await store.getMonitorRun(old.id))?.pages[0]).to.deep.include({ report: null, verdict: null, journey: null });
      expect((await store.listMonitorRuns(monitor.id, 1))[0]?.pages[0]).to.deep.include({ report: null, verdict: null, journey: null });
    });

    it('deletes a monitor with its runs', async () => {
      const { store, account } = current();
      const monitor = await store.createMonitor({ accountId: account.id, ...spec() });
      const run = await store.recordMonitorRun(runOf(monitor.id, new Date()));
      expect(await store.deleteMonitor(monitor.id)).to.equal(true);
      expect(await store.getMonitor(monitor.id)).to.equal(null);
      expect(await store.getMonitorRun(run.id)).to.equal(null);
      expect(await store.deleteMonitor(monitor.id)).to.equal(false);
    });
  });
}
