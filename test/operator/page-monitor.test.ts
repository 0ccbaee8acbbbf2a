import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Monitor, MonitorRun } from '../../lib/store/monitors.ts';
import type { Account } from '../../lib/store/store.ts';
import type { PageMonitorResource, SiteResource } from '../../operator/src/resources.ts';
import type { Renderer } from '../../services/renderer/src/renderer.ts';
import { resettingPort } from '../support/fixture-server.ts';
import { sharedRenderer } from '../support/harness.ts';
import { kubectl } from '../support/k8s-tools.ts';
import {
  Resources,
  describeOnEachTarget,
  ready,
  startHostedApi,
  startRealTarget,
  startTestOperator,
  waitFor,
  type HostedApi,
  type KubeTarget,
  type RunningOperator,
} from './support.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';
import { startLoginSite, type LoginSite } from '../support/login-site.ts';

/**
 * The PageMonitor controller through the API: the resource becomes an API monitor (managedBy),
 * and the runs the API makes come back as status, conditions with observedGeneration, printer
 * columns and events. The API runs monitors on its job runner, and the tests ask for runs through
 * POST /api/monitors/{id}/runs, as a user would. The fast legs (the in-process fake API server
 * always, the real one with KUBECONFIG) capture with the stub renderer; the change found on a page
 * is the real API server's leg with real Chromium.
 */
interface MonitorContext {
  target: KubeTarget;
  api: HostedApi;
  running: RunningOperator;
  kube: Resources;
  account: Account;
  key: string;
}

/** A fresh target, a hosted API that runs monitors, an operator refreshing status every second, an account and its key. */
function useMonitorOperator(start: () => Promise<KubeTarget>, renderer?: () => Promise<Renderer>): MonitorContext {
  const ctx = {} as MonitorContext;
  beforeEach(async () => {
    ctx.target = await start();
    ctx.api = await startHostedApi(ctx.target, { monitors: true, ...(renderer ? { renderer: await renderer() } : {}) });
    ctx.running = await startTestOperator(ctx.target, { api: ctx.api, env: { MONITOR_STATUS_INTERVAL_SECONDS: '1' } });
    ctx.kube = new Resources(ctx.target);
    ctx.account = await ctx.api.store.createAccount({ name: 'Acme' });
    ctx.key = (await ctx.api.store.createKey({ accountId: ctx.account.id, name: 'admin', kind: 'full' })).secret;
  });
  afterEach(async function () {
    this.timeout(180_000);
    await ctx.running.stop();
    await ctx.api.close();
    await ctx.target.close();
  });
  return ctx;
}

/** The helpers every leg uses, on its context. */
function monitorHelpers(ctx: MonitorContext) {
  const get = async (name: string) => (await ctx.kube.get<PageMonitorResource>('PageMonitor', name)) as PageMonitorResource;
  const condition = (resource: PageMonitorResource | undefined, type: string) => resource?.status?.conditions?.find((candidate) => candidate.type === type);
  /** The management API, with the account's key. */
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(new URL(path, ctx.api.url), {
      method,
      headers: { 'X-API-Key': ctx.key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: string } };
  };
  const monitorOf = (name: string): Promise<Monitor> =>
    waitFor(`the API's monitor of ${name}`, async () => (await ctx.api.store.listMonitors(ctx.account.id)).find((monitor) => monitor.managedBy?.name === name) ?? false, 400, 50);
  const readyMonitor = (name: string) =>
    waitFor(`PageMonitor ${name} Ready`, async () => {
      const resource = await get(name);
      return ready(resource)?.status === 'True' && resource.status?.observedGeneration === resource.metadata.generation && resource;
    }, 400, 50);
  const notReady = (name: string, reason: string) =>
    waitFor(`PageMonitor ${name} Ready=False ${reason}`, async () => {
      const found = ready(await get(name));
      return found?.status === 'False' && found.reason === reason && found;
    }, 400, 50);
  /** Asks the API for a run (POST /api/monitors/{id}/runs) and waits until the resource's status shows it. */
  const runAndMirror = async (name: string): Promise<{ run: MonitorRun; resource: PageMonitorResource }> => {
    const monitor = await monitorOf(name);
    const before = (await ctx.api.store.listMonitorRuns(monitor.id, 1))[0]?.id;
    const asked = await call('POST', `/api/monitors/${monitor.id}/runs`);
    expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
    const run = await waitFor('the run', async () => {
      const [latest] = await ctx.api.store.listMonitorRuns(monitor.id, 1);
      return latest !== undefined && latest.id !== before && latest;
    }, 1200, 100);
    const resource = await waitFor(`the status of run ${run.id}`, async () => {
      const current = await get(name);
      return current.status?.lastRunId === run.id && current;
    }, 600, 100);
    expect(resource.status?.lastRunTime).to.equal(run.finishedAt.toISOString());
    return { run, resource };
  };
  const eventsOf = async (name: string, reason: string) => (await ctx.kube.events()).filter((event) => event.object === `PageMonitor/${name}` && event.reason === reason);
  return { get, condition, call, monitorOf, readyMonitor, notReady, runAndMirror, eventsOf };
}

describeOnEachTarget('PageMonitor controller', 120_000, (start) => {
  const ctx = useMonitorOperator(start);
  const { get, condition, call, monitorOf, readyMonitor, notReady, runAndMirror, eventsOf } = monitorHelpers(ctx);
  const page = { name: 'offers', url: 'https://shop.example/offers' };

  it('waits for the Site of spec.siteRef (SiteNotFound), refuses a URL the Site does not allow with the API\'s message, and is Ready once the Site allows it', async () => {
    await ctx.kube.createPageMonitor('scoped', { siteRef: 'shop', schedule: '@daily', pages: [page] });
    const missing = await notReady('scoped', 'SiteNotFound');
    expect(missing.message).to.equal(`spec.siteRef: Site ${ctx.target.namespace}/shop does not exist or is not reconciled into the API yet`);

    await ctx.kube.createSite('shop', { account: ctx.account.id, allowedDomains: ['other.example'] });
    const refused = await notReady('scoped', 'InvalidSpec');
    expect(refused.message).to.match(/^pages\[0\]\.url: shop\.example is not among the allowed domains of site site_/);
    expect(await ctx.api.store.listMonitors(ctx.account.id), 'nothing half-made').to.deep.equal([]);

    // Terminal until the spec or the Site changes: the status interval refreshes a Ready monitor
    // (two of its runs reach its status) and leaves the refused one alone.
    const notReadyCount = async () =>
      (await ctx.running.operator.metrics.reconcileTotal.get()).values.find((value) => value.labels.kind === 'PageMonitor' && value.labels.result === 'not_ready')?.value ?? 0;
    await ctx.kube.createPageMonitor('witness', { account: ctx.account.id, schedule: '@daily', pages: [page] });
    await runAndMirror('witness');
    const refusals = await notReadyCount();
    await runAndMirror('witness');
    expect(await notReadyCount(), 'no retry of the refused spec').to.equal(refusals);
    expect(await ctx.api.store.listMonitors(ctx.account.id)).to.have.length(1);

    await ctx.kube.patchSpec('Site', 'shop', { allowedDomains: ['other.example', 'shop.example'] });
    const resource = await readyMonitor('scoped');
    const site = (await ctx.kube.get<SiteResource>('Site', 'shop')) as SiteResource;
    const monitor = await monitorOf('scoped');
    expect(monitor).to.deep.include({ siteId: site.status?.siteId, accountId: ctx.account.id, schedule: '@daily' });
    expect(resource.status).to.deep.include({ monitorId: monitor.id });
    expect(condition(resource, 'Changed')).to.deep.include({ status: 'Unknown', reason: 'NotRunYet', observedGeneration: resource.metadata.generation });
  });

  it("takes a page behind a login's credentials from the Secret it names (CredentialsNotFound until it exists); the resource and the API's answers never hold them", async () => {
    const login = { ...page, name: 'account', locale: 'fr-FR', credentialsSecretRef: { name: 'shop-login' } };
    await ctx.kube.createPageMonitor('login', { account: ctx.account.id, schedule: '@daily', pages: [login] });
    const missing = await notReady('login', 'CredentialsNotFound');
    expect(missing.message).to.equal(`spec.pages[account].credentialsSecretRef: Secret ${ctx.target.namespace}/shop-login does not exist`);

    await ctx.kube.createSecret('shop-login', { username: 'ada', password: 'lovelace-secret', headers: '{"X-Tenant": "acme"}' });
    // The Secret is read on the next full reconcile; a spec change asks for one at once.
    await ctx.kube.patchSpec('PageMonitor', 'login', { suspend: false });
    await readyMonitor('login');
    const monitor = await monitorOf('login');
    expect(monitor.pages[0]).to.deep.include({
      name: 'account',
      locale: 'fr-FR',
      credentials: { headers: { 'X-Tenant': 'acme' }, authorization: { type: 'basic', username: 'ada', password: 'lovelace-secret' } },
    });
    const answered = await call('GET', `/api/monitors/${monitor.id}`);
    expect((answered.body.pages as Array<Record<string, unknown>>)[0]).to.deep.include({ name: 'account', hasCredentials: true });
    expect(JSON.stringify(answered.body)).to.not.include('lovelace-secret');
    expect(JSON.stringify(await get('login'))).to.not.include('lovelace-secret');
  });

  it("takes a journey's named values from the Secret's values key (issue #41), and refuses a valueFrom the Secret lacks with the API's message (InvalidSpec); the values are nowhere else", async () => {
    const steps = [
      { action: 'fill', selector: '#user', value: 'ada' },
      { action: 'fill', selector: '#password', valueFrom: 'password' },
      { action: 'press', selector: '#password', key: 'Enter' },
    ];
    await ctx.kube.createSecret('shop-journey', { values: '{"pin": "4242-journey-pin"}' });
    await ctx.kube.createPageMonitor('journey', { account: ctx.account.id, schedule: '@daily', pages: [{ ...page, name: 'account', steps, credentialsSecretRef: { name: 'shop-journey' } }] });
    const refused = await notReady('journey', 'InvalidSpec');
    expect(refused.message).to.include('pages[0]: steps[1].valueFrom names "password", which credentials.values does not hold');
    expect(refused.message).to.not.include('4242-journey-pin');

    await ctx.kube.createSecret('shop-login', { values: '{"password": "lovelace-journey-secret"}' });
    await ctx.kube.patchSpec('PageMonitor', 'journey', { pages: [{ ...page, name: 'account', steps, credentialsSecretRef: { name: 'shop-login' } }] });
    await readyMonitor('journey');
    const monitor = await monitorOf('journey');
    expect(monitor.pages[0]).to.deep.include({ name: 'account', steps, credentials: { values: { password: 'lovelace-journey-secret' } } });
    const answered = await call('GET', `/api/monitors/${monitor.id}`);
    expect((answered.body.pages as Array<Record<string, unknown>>)[0]).to.deep.include({ name: 'account', steps, hasCredentials: true });
    expect(JSON.stringify(answered.body)).to.not.include('lovelace-journey-secret');
    expect(JSON.stringify(await get('journey'))).to.not.include('lovelace-journey-secret');
  });

  it('refuses a Secret whose values key is not JSON (InvalidSpec), naming the key and never its text', async () => {
    await ctx.kube.createSecret('broken-values', { values: 'password=hunter2-journey' });
    await ctx.kube.createPageMonitor('broken', { account: ctx.account.id, schedule: '@daily', pages: [{ ...page, name: 'account', credentialsSecretRef: { name: 'broken-values' } }] });
    const refused = await notReady('broken', 'InvalidSpec');
    expect(refused.message).to.equal(`spec.pages[account].credentialsSecretRef: Secret ${ctx.target.namespace}/broken-values: its key "values" is not JSON`);
  });

  it('reports AccountNotFound, with the way out, for a spec.account that names no account', async () => {
    await ctx.kube.createPageMonitor('orphan', { account: 'acct_missing', schedule: '@daily', pages: [page] });
    const found = await notReady('orphan', 'AccountNotFound');
    expect(found.message).to.match(/^Account acct_missing does not exist in the store: create it with "viewfinder accounts create"/);
  });

  it('brings a change of spec, and suspend, to the API; nextRunTime goes while suspended', async () => {
    await ctx.kube.createPageMonitor('nightly', { account: ctx.account.id, schedule: '0 6 * * *', compare: { threshold: 0.05 }, pages: [page] });
    const first = await readyMonitor('nightly');
    expect(new Date(first.status?.nextRunTime as string).getUTCHours()).to.equal(6);
    expect((await monitorOf('nightly')).compare).to.deep.equal({ threshold: 0.05, baseline: 'accepted', pixelTolerance: 0.1 });

    await ctx.kube.patchSpec('PageMonitor', 'nightly', { suspend: true, schedule: '0 7 * * *' });
    const suspended = await waitFor('the suspended status', async () => {
      const resource = await get('nightly');
      return resource.status?.observedGeneration === resource.metadata.generation && ready(resource)?.status === 'True' && resource;
    }, 400, 50);
    expect(suspended.metadata.generation).to.be.greaterThan(first.metadata.generation);
    expect(suspended.status?.nextRunTime).to.equal(undefined);
    expect(ready(suspended)?.message).to.match(/^Monitor mon_\w+ is suspended$/);
    expect(await monitorOf('nightly')).to.deep.include({ suspend: true, schedule: '0 7 * * *' });
  });

  it('never overwrites a monitor it does not own, and its own refuses edits through the management API (409)', async () => {
    const own = await call('POST', '/api/monitors', { name: 'storefront', schedule: '0 5 * * *', pages: [page] });
    expect(own.status, JSON.stringify(own.body)).to.equal(201);
    await ctx.kube.createSite('shop', { account: ctx.account.id, allowedDomains: ['shop.example'] });
    await ctx.kube.createPageMonitor('storefront', { siteRef: 'shop', schedule: '0 6 * * *', pages: [page] });
    const resource = await readyMonitor('storefront');
    const managed = await monitorOf('storefront');
    expect(managed.id).to.not.equal(own.body.id);
    expect(resource.status?.monitorId).to.equal(managed.id);
    expect((await call('GET', `/api/monitors/${own.body.id as string}`)).body).to.deep.include({ schedule: '0 5 * * *', managedBy: null });

    const edit = await call('PATCH', `/api/monitors/${managed.id}`, { schedule: '0 8 * * *' });
    expect(edit.status).to.equal(409);
    expect(edit.body.error).to.include(`(kubectl -n ${ctx.target.namespace} edit pagemonitors.viewfinder.dev storefront)`);
    expect((await call('DELETE', `/api/monitors/${managed.id}`)).status).to.equal(409);

    // spec.account is immutable (CEL), but a siteRef to another account's Site reaches the API: its 409
    // becomes the condition, and the monitor stays as it was.
    const other = await ctx.api.store.createAccount({ name: 'Other' });
    await ctx.kube.createSite('elsewhere', { account: other.id, allowedDomains: ['shop.example'] });
    await waitFor('Site elsewhere Ready', async () => ready(await ctx.kube.get<SiteResource>('Site', 'elsewhere'))?.status === 'True', 400, 50);
    await ctx.kube.patchSpec('PageMonitor', 'storefront', { siteRef: 'elsewhere' });
    const mismatch = await notReady('storefront', 'AccountMismatch');
    expect(mismatch.message).to.match(/belongs to another account; spec\.account is immutable/);
    expect(await ctx.api.store.getMonitor(managed.id)).to.deep.include({ accountId: ctx.account.id, siteId: managed.siteId, schedule: '0 6 * * *' });
  });

  it('records each event once: across an operator restart, and when the status that remembers the run was lost', async () => {
    await ctx.kube.createPageMonitor('steady', { account: ctx.account.id, schedule: '@daily', pages: [page] });
    const first = await runAndMirror('steady');
    expect(first.run.pages[0]).to.deep.include({ outcome: 'baseline' });
    expect(first.resource.status?.pages?.[0]).to.deep.include({ name: 'offers', changed: false, baselineCaptureId: first.run.pages[0]?.captureImageId });
    expect(condition(first.resource, 'Changed')).to.deep.include({ status: 'False', reason: 'NoChange' });
    const baselineEvents = await waitFor('the BaselineAccepted event', async () => {
      const found = await eventsOf('steady', 'BaselineAccepted');
      return found.length > 0 && found;
    });
    expect(baselineEvents).to.have.length(1);
    expect(baselineEvents[0]).to.deep.include({ type: 'Normal', message: `Page offers: its first picture ${first.run.pages[0]?.captureImageId} is the baseline` });

    // A new operator (a restart, or another leader) reconciles everything again from the status.
    await ctx.running.stop();
    ctx.running = await startTestOperator(ctx.target, { api: ctx.api, env: { MONITOR_STATUS_INTERVAL_SECONDS: '1' } });
    const second = await runAndMirror('steady');
    expect(second.run.pages[0]).to.deep.include({ outcome: 'unchanged', diffRatio: 0 });

    // As if a leader recorded the events and died before the status: the events' names make them once.
    await ctx.kube.patchStatus('PageMonitor', 'steady', { lastRunId: null, pages: [{ name: 'offers' }] });
    await waitFor('the status mirrored again', async () => {
      const resource = await get('steady');
      return resource.status?.lastRunId === second.run.id && resource.status.pages?.[0]?.baselineCaptureId !== undefined;
    }, 400, 50);
    expect(await eventsOf('steady', 'BaselineAccepted')).to.have.length(1);
    expect(await eventsOf('steady', 'PageChanged')).to.deep.equal([]);
  });

  it("deletes the API's monitor, its runs and its pictures with the resource (finalizer)", async () => {
    await ctx.kube.createPageMonitor('gone', { account: ctx.account.id, schedule: '@daily', pages: [page] });
    const { run } = await runAndMirror('gone');
    const monitor = await monitorOf('gone');
    const imageId = run.pages[0]?.captureImageId as string;
    expect(await ctx.api.monitors?.images.get(imageId)).to.be.instanceOf(Buffer);
    await ctx.kube.delete('PageMonitor', 'gone');
    await waitFor('the resource to go', async () => (await ctx.kube.get('PageMonitor', 'gone')) === undefined, 400, 50);
    expect(await ctx.api.store.getMonitor(monitor.id)).to.equal(null);
    expect(await ctx.api.store.listMonitorRuns(monitor.id, 10)).to.deep.equal([]);
    expect(await ctx.api.monitors?.images.get(imageId)).to.equal(null);
  });
});

describe('PageMonitor controller on a real API server, with real Chromium capturing pages that change', function () {
  this.timeout(300_000);
  if (skippedWithoutCluster('the PageMonitor controller on a real API server, with kubectl')) return;
  let server: http.Server;
  let origin: string;
  let colour = '#2a9d8f';
  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      const box = req.url === '/offers' ? `<div style="width:300px;height:150px;background:${colour}"></div>` : '<p>About us: nothing here moves.</p>';
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body style="margin:0"><h1>Shop</h1>${box}</body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const ctx = useMonitorOperator(startRealTarget, sharedRenderer);
  const { condition, call, monitorOf, readyMonitor, runAndMirror, eventsOf } = monitorHelpers(ctx);

  it('finds the change on the changed page only, and shows it in status, conditions, events and kubectl get vfmon; an accepted baseline ends it', async () => {
    colour = '#2a9d8f';
    const pages = [
      { name: 'offers', url: `${origin}/offers`, removeAds: false },
      { name: 'about', url: `${origin}/about`, removeAds: false },
    ];
    await ctx.kube.createPageMonitor('storefront', { account: ctx.account.id, schedule: '0 6 * * *', compare: { threshold: 0.01 }, pages });
    const created = await readyMonitor('storefront');
    expect(condition(created, 'Changed')).to.deep.include({ status: 'Unknown', reason: 'NotRunYet' });

    const first = await runAndMirror('storefront');
    expect(first.resource.status?.pages?.map((entry) => [entry.name, entry.changed])).to.deep.equal([['offers', false], ['about', false]]);
    await waitFor('a BaselineAccepted event per page', async () => (await eventsOf('storefront', 'BaselineAccepted')).length === 2);

    colour = '#e76f51';
    const second = await runAndMirror('storefront');
    const [offers, about] = second.resource.status?.pages ?? [];
    const [offersRun, aboutRun] = second.run.pages;
    expect(offers).to.deep.include({ name: 'offers', changed: true, lastCaptureId: offersRun?.captureImageId, baselineCaptureId: first.run.pages[0]?.captureImageId });
    // A 300×150 box of a 1280×720 picture: 4.9 % of its pixels.
    expect(offers?.diffRatio).to.be.within(0.04, 0.06);
    // Status shows the ratio to four significant digits for kubectl's column; the run keeps the exact one.
    expect(offers?.diffRatio).to.equal(Number(offersRun?.diffRatio?.toPrecision(4)));
    expect(offers?.regions?.[0]).to.deep.include({ left: 0, width: 300 });
    expect(about).to.deep.include({ name: 'about', changed: false, diffRatio: 0, regions: [], lastCaptureId: aboutRun?.captureImageId });
    expect(second.resource.status?.largestDiffRatio).to.equal(offers?.diffRatio);
    const changed = condition(second.resource, 'Changed');
    expect(changed).to.deep.include({ status: 'True', reason: 'PageChanged', observedGeneration: second.resource.metadata.generation });
    expect(changed?.message).to.match(/^offers: [45]\.\d\d %$/);
    const pageChanged = await waitFor('the PageChanged event', async () => {
      const found = await eventsOf('storefront', 'PageChanged');
      return found.length > 0 && found;
    });
    expect(pageChanged).to.have.length(1);
    expect(pageChanged[0]?.type).to.equal('Warning');
    expect(pageChanged[0]?.message).to.match(new RegExp(`^Page offers changed: [45]\\.\\d\\d % of its pixels differ from the baseline \\(threshold 1\\.00 %\\), run ${second.run.id}$`));

    // kubectl (the real one) prints the columns from the status.
    const printed = kubectl(['get', 'vfmon', 'storefront', '--namespace', ctx.target.namespace]);
    expect(printed.status, printed.output).to.equal(0);
    const [header, row] = printed.stdout.trim().split('\n');
    expect(header?.split(/\s{2,}/)).to.deep.equal(['NAME', 'SCHEDULE', 'LAST RUN', 'CHANGED', 'LARGEST DIFF', 'AGE']);
    expect(row).to.match(/^storefront\s+0 6 \* \* \*\s+\d+s\s+True\s+0\.0[45]\d*\s+\d+s$/);

    // Accepting the new picture, through the API: BaselineAccepted, and the next run is unchanged.
    const monitor = await monitorOf('storefront');
    const accepted = await call('POST', `/api/monitors/${monitor.id}/baseline`, { runId: second.run.id, page: 'offers' });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    await waitFor('the BaselineAccepted event of the accepted picture', async () =>
      (await eventsOf('storefront', 'BaselineAccepted')).some((event) => event.message === `Page offers: picture ${offersRun?.captureImageId} was accepted as the new baseline`),
    );
    const third = await runAndMirror('storefront');
    expect(condition(third.resource, 'Changed')).to.deep.include({ status: 'False', reason: 'NoChange' });
    expect(third.resource.status?.pages?.map((entry) => [entry.name, entry.changed, entry.diffRatio])).to.deep.equal([['offers', false, 0], ['about', false, 0]]);
    expect(await eventsOf('storefront', 'PageChanged'), 'one event per changed run').to.have.length(1);
    expect(await eventsOf('storefront', 'BaselineAccepted')).to.have.length(3);

    await ctx.kube.delete('PageMonitor', 'storefront');
    await waitFor('the monitor to leave the API', async () => (await ctx.api.store.getMonitor(monitor.id)) === null, 400, 50);
    expect(await ctx.api.monitors?.images.get(offersRun?.captureImageId as string)).to.equal(null);
    await waitFor('the resource to go', async () => (await ctx.kube.get('PageMonitor', 'storefront')) === undefined, 400, 50);
  });

  it('records RunFailed, with the error in the page status, for a page that cannot be captured', async () => {
    // A port that resets every connection, held by this test (a free port could be taken meanwhile).
    const down = await resettingPort();
    try {
      await ctx.kube.createPageMonitor('broken', { account: ctx.account.id, schedule: '@daily', pages: [{ name: 'down', url: `http://127.0.0.1:${down.port}/`, removeAds: false }] });
      const { resource, run } = await runAndMirror('broken');
      expect(resource.status?.pages?.[0]?.lastError).to.match(/ERR_CONNECTION_RESET/);
      expect(condition(resource, 'Changed')?.message).to.match(/\(1 failed\)$/);
      const failed = await waitFor('the RunFailed event', async () => {
        const found = await eventsOf('broken', 'RunFailed');
        return found.length > 0 && found;
      });
      expect(failed).to.have.length(1);
      expect(failed[0]).to.deep.include({ type: 'Warning' });
      expect(failed[0]?.message).to.match(new RegExp(`^Page down failed in run ${run.id}: `));
    } finally {
      await down.close();
    }
  });
});

describeOnEachTarget('PageMonitor checks, with real Chromium (issue #40)', 300_000, (start) => {
  let server: http.Server;
  let origin: string;
  let broken = false;
  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      const script = req.url === '/checkout' && broken ? "<script>console.error('payment widget failed to load')</script>" : '';
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><main><h1>Checkout</h1><button id="pay">Pay</button></main>${script}</body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const ctx = useMonitorOperator(start, sharedRenderer);
  const { get, condition, readyMonitor, notReady, runAndMirror, eventsOf } = monitorHelpers(ctx);

  it('goes Healthy=False ChecksFailing naming the page and check when the page breaks, with failingChecks and one event, and back to True with one ChecksPassing when fixed', async () => {
    broken = false;
    const checks = { status: [200], maxConsoleErrors: 0, text: [{ selector: '#pay', contains: 'Pay' }] };
    await ctx.kube.createPageMonitor('shop', {
      account: ctx.account.id,
      schedule: '@daily',
      pages: [
        { name: 'checkout', url: `${origin}/checkout`, removeAds: false, checks },
        { name: 'about', url: `${origin}/about`, removeAds: false },
      ],
    });
    const created = await readyMonitor('shop');
    expect(condition(created, 'Healthy')).to.deep.include({ status: 'Unknown', reason: 'NotRunYet', message: 'No run has judged the checks yet' });

    const passing = await runAndMirror('shop');
    expect(condition(passing.resource, 'Healthy')).to.deep.include({ status: 'True', reason: 'ChecksPassing', message: 'Every page passes its checks (checkout)' });
    expect(passing.resource.status?.pages?.[0]).to.not.have.property('failingChecks');

    broken = true;
    const failing = await runAndMirror('shop');
    const healthy = condition(failing.resource, 'Healthy');
    expect(healthy).to.deep.include({ status: 'False', reason: 'ChecksFailing', message: 'checkout: maxConsoleErrors (1 console error, at most 0 allowed)' });
    expect(failing.resource.status?.pages?.[0]?.failingChecks).to.deep.equal([{ check: 'maxConsoleErrors', measured: '1', bound: '0', message: '1 console error, at most 0 allowed' }]);
    expect(failing.resource.status?.pages?.[1], 'a page without checks').to.not.have.property('failingChecks');
    // The pixels are judged apart: the page with the error looks the same (a console error paints nothing).
    expect(condition(failing.resource, 'Changed')).to.deep.include({ status: 'False' });
    const warned = await waitFor('the ChecksFailing event', async () => {
      const found = await eventsOf('shop', 'ChecksFailing');
      return found.length > 0 && found;
    });
    expect(warned[0]).to.deep.include({ type: 'Warning', message: `checkout: maxConsoleErrors (1 console error, at most 0 allowed) (run ${failing.run.id})` });

    // Failing the same check again is no change of state: no second event.
    await runAndMirror('shop');
    expect(await eventsOf('shop', 'ChecksFailing')).to.have.length(1);

    broken = false;
    const fixed = await runAndMirror('shop');
    expect(condition(fixed.resource, 'Healthy')).to.deep.include({ status: 'True', reason: 'ChecksPassing' });
    expect(fixed.resource.status?.pages?.[0]).to.not.have.property('failingChecks');
    const passed = await waitFor('the ChecksPassing event', async () => {
      const found = await eventsOf('shop', 'ChecksPassing');
      return found.length > 0 && found;
    });
    expect(passed).to.have.length(1);
    expect(passed[0]).to.deep.include({ type: 'Normal', message: 'Every page passes its checks (checkout) again' });
    expect(await eventsOf('shop', 'ChecksFailing')).to.have.length(1);
  });

  it("refuses a check the CRD leaves to the API with the API's message (InvalidSpec), and says NoChecks for a monitor without any", async () => {
    await ctx.kube.createPageMonitor('wrong', { account: ctx.account.id, schedule: '@daily', pages: [{ name: 'checkout', url: `${origin}/checkout`, checks: { maxConsoleErrors: -1 } }] });
    const refused = await notReady('wrong', 'InvalidSpec');
    expect(refused.message).to.equal('pages[0].checks.maxConsoleErrors must be a count from 0 to 1000000, or {max, ignore}');
    await ctx.kube.createPageMonitor('plain', { account: ctx.account.id, schedule: '@daily', pages: [{ name: 'about', url: `${origin}/about` }] });
    expect(condition(await readyMonitor('plain'), 'Healthy')).to.deep.include({ status: 'Unknown', reason: 'NoChecks' });
    expect(await get('plain')).to.have.nested.property('status.monitorId');
  });
});

describeOnEachTarget('PageMonitor journeys, with real Chromium (issue #41)', 300_000, (start) => {
  const PASSWORD = 'pw-operator-journey-41';
  let site: LoginSite;
  before(async () => {
    site = await startLoginSite(PASSWORD);
  });
  after(() => site.close());

  const ctx = useMonitorOperator(start, sharedRenderer);
  const { condition, readyMonitor, runAndMirror, eventsOf } = monitorHelpers(ctx);
  const signIn = (waitFor: string) => [
    { action: 'fill', selector: '#user', value: 'ada' },
    { action: 'fill', selector: '#password', valueFrom: 'password' },
    { action: 'press', selector: '#password', key: 'Enter' },
    { action: 'waitFor', selector: waitFor, timeout: 3000 },
  ];

  it("signs in with the password of the Secret's values on every run (Healthy True), and goes Healthy=False ChecksFailing naming the step when the journey stops, with failingChecks and RunFailed; the password is in no status or event", async () => {
    await ctx.kube.createSecret('shop-login', { values: JSON.stringify({ password: PASSWORD }) });
    const page = { name: 'account', url: `${site.origin}/login`, removeAds: false, credentialsSecretRef: { name: 'shop-login' } };
    await ctx.kube.createPageMonitor('account', { account: ctx.account.id, schedule: '@daily', pages: [{ ...page, steps: signIn('#welcome') }] });
    await readyMonitor('account');

    const passing = await runAndMirror('account');
    expect(site.logins).to.deep.equal([{ user: 'ada', ok: true }]);
    expect(passing.run.pages[0]).to.deep.include({ outcome: 'baseline', error: null });
    expect(passing.run.pages[0]!.journey!.steps.map((step) => step.status)).to.deep.equal(['ok', 'ok', 'ok', 'ok']);
    expect(condition(passing.resource, 'Healthy')).to.deep.include({ status: 'True', reason: 'ChecksPassing', message: 'Every page passes its checks (account)' });

    // The page behind the login no longer shows #welcome: the journey stops at its last step.
    await ctx.kube.patchSpec('PageMonitor', 'account', { pages: [{ ...page, steps: signIn('#orders') }] });
    await readyMonitor('account');
    const failing = await runAndMirror('account');
    expect(failing.run.pages[0]).to.deep.include({ outcome: 'failed' });
    const message = failing.run.pages[0]!.error!;
    expect(message).to.match(/^Step 4 of 4 \(waitFor "#orders"\) failed: /);
    expect(condition(failing.resource, 'Healthy')).to.deep.include({ status: 'False', reason: 'ChecksFailing', message: `account: steps[3] (${message})` });
    expect(failing.resource.status?.pages?.[0]?.failingChecks).to.deep.equal([{ check: 'steps[3]', measured: 'selector-not-visible', bound: 'ok', message }]);
    const events = await waitFor('the RunFailed and ChecksFailing events', async () => {
      const found = [...(await eventsOf('account', 'RunFailed')), ...(await eventsOf('account', 'ChecksFailing'))];
      return found.length === 2 && found;
    });
    expect(JSON.stringify([events, await ctx.kube.get<PageMonitorResource>('PageMonitor', 'account')])).to.not.include(PASSWORD);
  });
});
