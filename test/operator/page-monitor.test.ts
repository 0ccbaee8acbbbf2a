import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Monitor, MonitorRun } from '../../lib/store/monitors.ts';
import type { Account } from '../../lib/store/store.ts';
import { GROUP, VERSION, type PageMonitorResource } from '../../operator/src/resources.ts';
import { startRenderer, testConfig } from '../support/harness.ts';
import { kubectl } from '../support/k8s-tools.ts';
import { REAL_KUBECONFIG, Resources, startFakeTarget, startHostedApi, startRealTarget, startTestOperator, waitFor, type HostedApi, type KubeTarget, type RunningOperator } from './support.ts';

/**
 * The PageMonitor controller through the API: the resource becomes an API monitor (managedBy), and
 * the runs the API makes (real Chromium against a page this test changes) come back as status,
 * conditions with observedGeneration, printer columns and events. On the real API server when
 * KUBECONFIG is set (bash .ci/run), else on the in-process fake.
 */
describe(`PageMonitor controller (${REAL_KUBECONFIG ? 'real API server' : 'fake API server'}, real Chromium)`, function () {
  this.timeout(300_000);
  let server: http.Server;
  let origin: string;
  let colour = '#2a9d8f';
  let target: KubeTarget;
  let api: HostedApi;
  let running: RunningOperator;
  let kube: Resources;
  let account: Account;

  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body style="margin:0"><h1>Offers</h1><div style="width:300px;height:150px;background:${colour}"></div></body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(async () => {
    colour = '#2a9d8f';
    target = REAL_KUBECONFIG ? await startRealTarget() : await startFakeTarget();
    api = await startHostedApi(target, { monitors: true, renderer: await startRenderer(testConfig({ RENDER_CONCURRENCY: '1' })) });
    running = await startTestOperator(target, { api, env: { MONITOR_STATUS_INTERVAL_SECONDS: '1' } });
    kube = new Resources(target);
    account = await api.store.createAccount({ name: 'Acme' });
  });
  afterEach(async function () {
    this.timeout(180_000);
    await running.stop();
    await api.close();
    await target.close();
  });

  const custom = () => target.kubeConfig.makeApiClient(CustomObjectsApi);
  const coordinates = () => ({ group: GROUP, version: VERSION, namespace: target.namespace, plural: 'pagemonitors' });
  const create = (name: string, spec: PageMonitorResource['spec']) =>
    custom().createNamespacedCustomObject({ ...coordinates(), body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'PageMonitor', metadata: { name }, spec } });
  const get = async (name: string) => (await custom().getNamespacedCustomObject({ ...coordinates(), name })) as PageMonitorResource;
  const condition = (resource: PageMonitorResource, type: string) => resource.status?.conditions?.find((candidate) => candidate.type === type);
  const spec = (pages: PageMonitorResource['spec']['pages']): PageMonitorResource['spec'] => ({ account: account.id, schedule: '0 6 * * *', compare: { threshold: 0.01 }, pages });
  const monitorOf = async (name: string): Promise<Monitor> =>
    waitFor(`the API's monitor of ${name}`, async () => (await api.store.listMonitors(account.id)).find((monitor) => monitor.managedBy?.name === name) ?? false, 400, 50);
  /** Runs the monitor now in the API and waits until the resource's status shows that run. */
  async function runAndMirror(name: string): Promise<{ run: MonitorRun; resource: PageMonitorResource }> {
    const monitor = await monitorOf(name);
    const before = (await api.store.listMonitorRuns(monitor.id, 1))[0]?.id;
    await api.monitors!.runNow(monitor);
    const run = await waitFor('the run', async () => {
      const [latest] = await api.store.listMonitorRuns(monitor.id, 1);
      return latest !== undefined && latest.id !== before && latest;
    }, 1200, 100);
    const resource = await waitFor('the status of the run', async () => {
      const current = await get(name);
      return current.status?.lastRunTime === run.finishedAt.toISOString() && current;
    }, 600, 100);
    return { run, resource };
  }

  it('reconciles the resource into an API monitor and mirrors runs into status, conditions, printer columns and events', async () => {
    await create('storefront', spec([{ name: 'offers', url: `${origin}/offers`, removeAds: false }]));
    const monitor = await monitorOf('storefront');
    expect(monitor.managedBy).to.deep.include({ kind: 'PageMonitor', namespace: target.namespace, name: 'storefront' });
    expect(monitor.compare).to.deep.equal({ threshold: 0.01, baseline: 'accepted', pixelTolerance: 0.1 });

    const ready = await waitFor('Ready', async () => {
      const current = await get('storefront');
      return condition(current, 'Ready')?.status === 'True' && current;
    }, 400, 50);
    expect(ready.status).to.deep.include({ monitorId: monitor.id, observedGeneration: ready.metadata.generation });
    expect(new Date(ready.status?.nextRunTime as string).getUTCHours()).to.equal(6);
    expect(condition(ready, 'Changed')).to.deep.include({ status: 'Unknown', reason: 'NotRunYet', observedGeneration: ready.metadata.generation });

    const first = await runAndMirror('storefront');
    expect(first.resource.status?.pages?.[0]).to.deep.include({ name: 'offers', changed: false, baselineCaptureId: first.run.pages[0]?.captureImageId });
    expect(condition(first.resource, 'Changed')).to.deep.include({ status: 'False', reason: 'NoChange' });

    colour = '#e76f51';
    const second = await runAndMirror('storefront');
    const offers = second.resource.status?.pages?.[0];
    expect(offers).to.deep.include({ name: 'offers', changed: true, lastCaptureId: second.run.pages[0]?.captureImageId });
    expect(offers?.diffRatio).to.be.within(0.04, 0.07);
    expect(offers?.regions?.[0]).to.deep.include({ left: 0, width: 300 });
    expect(second.resource.status?.largestDiffRatio).to.equal(offers?.diffRatio);
    const changed = condition(second.resource, 'Changed');
    expect(changed).to.deep.include({ status: 'True', reason: 'PageChanged', observedGeneration: second.resource.metadata.generation });
    expect(changed?.message).to.match(/^offers: \d+\.\d\d %$/);
    await waitFor('the PageChanged event', async () =>
      (await kube.events()).some((event) => event.reason === 'PageChanged' && event.type === 'Warning' && event.object === 'PageMonitor/storefront' && /Page offers changed: \d+\.\d\d % of its pixels/.test(event.message)),
    );

    if (REAL_KUBECONFIG) {
      const printed = kubectl(['get', 'vfmon', 'storefront', '--namespace', target.namespace, '--no-headers']);
      expect(printed.stdout).to.match(/^storefront\s+0 6 \* \* \*\s+\S+\s+True\s+0\.0\d+\s+\S+/);
    }

    // Accepting the new picture: a BaselineAccepted event, and the next run is unchanged.
    await api.monitors!.acceptBaseline(await monitorOf('storefront'), second.run.id, 'offers');
    const third = await runAndMirror('storefront');
    expect(condition(third.resource, 'Changed')).to.deep.include({ status: 'False' });
    await waitFor('the BaselineAccepted event', async () => (await kube.events()).some((event) => event.reason === 'BaselineAccepted' && event.type === 'Normal'));
  });

  it('records RunFailed for a page that cannot be captured, and the monitor goes with its resource', async () => {
    await create('broken', spec([{ name: 'gone', url: 'http://127.0.0.1:9/', removeAds: false }]));
    const { resource } = await runAndMirror('broken');
    expect(resource.status?.pages?.[0]?.lastError).to.match(/ERR_CONNECTION_REFUSED|failed/i);
    await waitFor('the RunFailed event', async () => (await kube.events()).some((event) => event.reason === 'RunFailed' && event.type === 'Warning' && /Page gone failed/.test(event.message)));
    const monitor = await monitorOf('broken');
    await custom().deleteNamespacedCustomObject({ ...coordinates(), name: 'broken' });
    await waitFor('the monitor to be deleted', async () => (await api.store.getMonitor(monitor.id)) === null, 400, 50);
  });

  it('waits for a Site named by siteRef (SiteNotFound), and refuses URLs that Site does not allow (InvalidSpec)', async () => {
    await create('scoped', { siteRef: 'shop', schedule: '@daily', pages: [{ name: 'offers', url: `${origin}/offers` }] });
    await waitFor('SiteNotFound', async () => condition(await get('scoped'), 'Ready')?.reason === 'SiteNotFound', 400, 50);
    await kube.createSite('shop', { account: account.id, allowedDomains: ['shop.example'] });
    const refused = await waitFor('InvalidSpec', async () => {
      const ready = condition(await get('scoped'), 'Ready');
      return ready?.reason === 'InvalidSpec' && ready;
    }, 400, 50);
    expect(refused.message).to.match(/127\.0\.0\.1 is not among the allowed domains/);
  });
});
