import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CHART,
  IMAGE_ARGS,
  ONE_SMALL_RENDERER,
  allReady,
  buildAndLoadImage,
  clusterIP,
  createAccount,
  deployPages,
  describePods,
  helm,
  apiCall,
  isReady,
  kubectl,
  pods,
  describeOnRealNode,
  until,
  NODE_BRIDGE,
  startChartPrometheus,
} from './cluster.ts';
import { startLoginSite, type LoginSite } from '../support/login-site.ts';

/**
 * Hosted values on the embedded store, on the real node: the operator's two pods (one leader)
 * reconcile a Site and an ApiKey applied with kubectl through the API, the key from the Secret
 * captures through the API Service, a domain change answers 403, a deleted ApiKey 401, a
 * PageMonitor with a sign-in journey (its password from a Secret) captures the page behind the
 * login on schedule; a PageMonitor with checks turns Healthy=False when its page breaks (one event, the metric, the
 * chart's alert firing in a real Prometheus) and back when it is fixed, and killing the leader hands
 * over to the other pod.
 */
describeOnRealNode('the chart on a real node: hosted values on the embedded store', function (node) {

  const namespace = `viewfinder-test-${randomBytes(4).toString('hex')}-hosted`;
  const release = 'vfh';
  const figures: string[] = [];
  let page: { url: string; ip: string };
  let base: string;
  let account: string;
  let accountKey: string;
  /** The shop's checkout page, on the node's bridge: the test breaks it and fixes it. */
  let shop: { url: string; broken: boolean; close: () => Promise<void> };
  /** A sign-in form on the bridge, for the journey (issue #41). */
  let login: LoginSite;
  const LOGIN_PASSWORD = 'node-journey-pw-7c1e9a';
  const apiKey = () => Buffer.from(kubectl(['get', 'secret', 'widget', '--namespace', namespace, '-o', 'jsonpath={.data.apiKey}']).stdout, 'base64').toString('utf8');
  const hostedCapture = async (key: string) => apiCall(base, key, 'POST', '/api/screenshot', { url: page.url }) as Promise<{ status: number; body: { success: boolean; image?: string; error?: string } }>;
  const apply = (objects: unknown[]) => {
    const applied = kubectl(['apply', '--namespace', namespace, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    expect(applied.status, applied.output).to.equal(0);
  };
  const site = (allowedDomains: string[]) => ({ apiVersion: 'viewfinder.dev/v1alpha1', kind: 'Site', metadata: { name: 'storefront', namespace }, spec: { account, allowedDomains } });
  const key = (name: string) => ({ apiVersion: 'viewfinder.dev/v1alpha1', kind: 'ApiKey', metadata: { name, namespace }, spec: { account, siteRef: 'storefront', restrictDomains: true } });
  const waitReady = (...objects: string[]) => {
    const waited = kubectl(['wait', '--namespace', namespace, '--for=condition=Ready', ...objects, '--timeout=120s']);
    expect(waited.status, waited.output + describePods(namespace)).to.equal(0);
  };
  const leader = () => kubectl(['get', 'lease', `${release}-viewfinder-operator`, '--namespace', namespace, '-o', 'jsonpath={.spec.holderIdentity}']).stdout.trim();

  before(async function () {
    this.timeout(1_200_000);
    buildAndLoadImage(node.stateDir);
    const created = kubectl(['create', 'namespace', namespace]);
    expect(created.status, created.output).to.equal(0);
    page = await deployPages(namespace);
    shop = await startShop();
    login = await startLoginSite(LOGIN_PASSWORD, NODE_BRIDGE);
  });

  after(async function () {
    this.timeout(300_000);
    if (figures.length > 0) console.log(`\n    real node, hosted values (embedded store):\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    // Sites and ApiKeys carry the operator's finalizer: delete them while the operator still runs.
    kubectl(['delete', 'sites.viewfinder.dev,apikeys.viewfinder.dev', '--all', '--namespace', namespace, '--wait=true', '--timeout=60s']);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=240s']);
    await shop?.close();
    await login?.close();
  });

  /** The release's values: the renderer reaches the pages Service and the shop on the bridge; the operator mirrors runs every 2 s. */
  const valueArgs = () => [
    '-f', `${CHART}/ci/embedded-values.yaml`,
    ...IMAGE_ARGS,
    ...ONE_SMALL_RENDERER,
    '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([page.ip, NODE_BRIDGE])}`,
    '--set', `operator.watchNamespaces={${namespace}}`,
    '--set-json', 'operator.extraEnv={"MONITOR_STATUS_INTERVAL_SECONDS":"2"}',
  ];

  it('installs: the API, a renderer and two operator pods go Ready, one operator leads', async () => {
    const started = performance.now();
    const installed = helm(['install', release, CHART, '--namespace', namespace, ...valueArgs()]);
    expect(installed.status, installed.output).to.equal(0);
    await allReady(namespace, release, 4);
    figures.push(`helm install to all 4 pods Ready: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await until('an operator pod to hold the Lease', () => pods(namespace, 'app.kubernetes.io/component=operator').some((pod) => pod.metadata.name === leader()), 60_000);
    base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
    ({ id: account, key: accountKey } = createAccount(namespace, release, 'Acme'));
    expect(account).to.be.a('string');
  });

  it('reconciles a Site and an ApiKey applied with kubectl; the key from the Secret captures through the API Service', async () => {
    apply([site([`pages.${namespace}.svc.cluster.local`]), key('widget')]);
    waitReady('site/storefront', 'apikey/widget');
    const response = await hostedCapture(apiKey());
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
    expect(response.body.image).to.match(/^data:image\/png;base64,iVBORw0KGgo/);
  });

  it("answers 403 on the next request once the Site's domains no longer include the page", async () => {
    const generation = () => kubectl(['get', 'site/storefront', '--namespace', namespace, '-o', 'jsonpath={.metadata.generation} {.status.observedGeneration}']).stdout.split(' ');
    apply([site(['example.com'])]);
    await until('the operator to reconcile the new domains', () => {
      const [current, observed] = generation();
      return current === observed;
    }, 60_000);
    const refused = await hostedCapture(apiKey());
    expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
    expect(refused.body.success).to.equal(false);
  });

  it('answers 401 once the ApiKey is deleted', async () => {
    const secret = apiKey();
    const deleted = kubectl(['delete', 'apikey/widget', '--namespace', namespace, '--wait=true', '--timeout=60s']);
    expect(deleted.status, deleted.output).to.equal(0);
    const refused = await hostedCapture(secret);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(401);
  });

  it('a PageMonitor with checks goes Healthy=False (ChecksFailing) when its page breaks: one event, the metric, the alert firing in Prometheus with the chart\'s rules; all clear once the page is fixed', async function () {
    this.timeout(600_000);
    const prometheus = await startChartPrometheus(release, namespace, valueArgs());
    const resource = 'pagemonitor/checkout';
    const status = () => JSON.parse(kubectl(['get', resource, '--namespace', namespace, '-o', 'jsonpath={.status}']).stdout || '{}') as {
      monitorId?: string;
      conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
      pages?: Array<{ name: string; failingChecks?: Array<{ check: string; message: string }> }>;
    };
    const healthy = () => status().conditions?.find((condition) => condition.type === 'Healthy');
    const events = (reason: string) =>
      (JSON.parse(kubectl(['get', 'events', '--namespace', namespace, '--field-selector', `involvedObject.kind=PageMonitor,involvedObject.name=checkout,reason=${reason}`, '-o', 'json']).stdout) as { items: Array<{ count?: number; message: string }> }).items;
    const failing = async () => (await prometheus.query(`viewfinder_monitor_page_checks_failing{namespace="${namespace}",name="checkout",page="checkout"}`)).map((sample) => Number(sample.value[1]));
    const alerting = async () => (await prometheus.alerts()).filter((alert) => alert.labels.alertname === 'ViewfinderMonitorPageChecksFailing' && alert.labels.name === 'checkout' && alert.labels.page === 'checkout');
    let runs = 0;
    /** Runs the monitor now (the schedule is once a year) and waits for the run to be recorded. */
    const runNow = async () => {
      const monitorId = status().monitorId!;
      const queued = await apiCall(base, accountKey, 'POST', `/api/monitors/${monitorId}/runs`);
      expect(queued.status, JSON.stringify(queued.body)).to.equal(202);
      runs += 1;
      await until(`run ${runs} to be recorded`, async () => ((await apiCall(base, accountKey, 'GET', `/api/monitors/${monitorId}/runs`)).body as unknown[]).length >= runs, 120_000);
    };
    try {
      apply([
        {
          apiVersion: 'viewfinder.dev/v1alpha1',
          kind: 'PageMonitor',
          metadata: { name: 'checkout', namespace },
          spec: { account, schedule: '0 0 1 1 *', pages: [{ name: 'checkout', url: shop.url, checks: { maxConsoleErrors: 0, text: [{ contains: 'Total' }] } }] },
        },
      ]);
      waitReady(resource);

      shop.broken = false;
      await runNow();
      await until('Healthy=True', () => healthy()?.status === 'True', 60_000, () => JSON.stringify(status()));

      shop.broken = true;
      const brokeAt = performance.now();
      await runNow();
      await until('Healthy=False', () => healthy()?.status === 'False', 60_000, () => JSON.stringify(status()));
      expect(healthy()!.reason).to.equal('ChecksFailing');
      expect(healthy()!.message).to.include('checkout').and.to.include('maxConsoleErrors').and.to.include('text[0]');
      expect(status().pages?.find((entry) => entry.name === 'checkout')?.failingChecks?.map((failure) => failure.check).sort()).to.deep.equal(['maxConsoleErrors', 'text[0].contains']);
      // A second failing run changes nothing: no second event.
      await runNow();
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const failingEvents = events('ChecksFailing');
      expect(failingEvents.map((event) => event.count ?? 1), JSON.stringify(failingEvents)).to.deep.equal([1]);
      await until('the metric to count 2 failing checks', async () => (await failing()).join() === '2', 60_000, prometheus.output);
      await until('ViewfinderMonitorPageChecksFailing to fire', async () => (await alerting()).some((alert) => alert.state === 'firing'), 300_000, prometheus.output);
      figures.push(`page broken: Healthy=False, the metric at 2 and the alert firing ${((performance.now() - brokeAt) / 1000).toFixed(0)} s after the run was asked for`);

      shop.broken = false;
      const fixedAt = performance.now();
      await runNow();
      await until('Healthy=True again', () => healthy()?.status === 'True', 60_000, () => JSON.stringify(status()));
      expect(status().pages?.find((entry) => entry.name === 'checkout')?.failingChecks ?? []).to.deep.equal([]);
      expect(events('ChecksFailing'), 'still one ChecksFailing event').to.have.length(1);
      expect(events('ChecksPassing').length, 'the return to passing is an event too').to.be.at.least(1);
      await until('the metric back to 0', async () => (await failing()).join() === '0', 60_000, prometheus.output);
      await until('the alert to clear', async () => (await alerting()).length === 0, 120_000, prometheus.output);
      figures.push(`page fixed: Healthy=True, the metric at 0 and the alert cleared ${((performance.now() - fixedAt) / 1000).toFixed(0)} s after the run was asked for`);
    } finally {
      await prometheus.close();
      kubectl(['delete', resource, '--namespace', namespace, '--ignore-not-found', '--wait=true', '--timeout=60s']);
    }
  });

  it("a PageMonitor with a sign-in journey, its password in a Secret's values, captures the page behind the login on schedule; the run reports each step, the password nowhere (issue #41)", async function () {
    this.timeout(300_000);
    const resource = 'pagemonitor/account';
    const status = () => JSON.parse(kubectl(['get', resource, '--namespace', namespace, '-o', 'jsonpath={.status}']).stdout || '{}') as { monitorId?: string; conditions?: Array<{ type: string; status: string }> };
    try {
      apply([
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'shop-login', namespace }, stringData: { values: JSON.stringify({ password: LOGIN_PASSWORD }) } },
        {
          apiVersion: 'viewfinder.dev/v1alpha1',
          kind: 'PageMonitor',
          metadata: { name: 'account', namespace },
          spec: {
            account,
            schedule: '* * * * *',
            pages: [
              {
                name: 'account',
                url: `${login.origin}/login`,
                credentialsSecretRef: { name: 'shop-login' },
                steps: [
                  { action: 'fill', selector: '#user', value: 'ada' },
                  { action: 'fill', selector: '#password', valueFrom: 'password' },
                  { action: 'press', selector: '#password', key: 'Enter' },
                  { action: 'waitFor', selector: '#welcome' },
                ],
                checks: { text: [{ selector: '#welcome', contains: 'Welcome' }] },
              },
            ],
          },
        },
      ]);
      waitReady(resource);
      const monitorId = status().monitorId!;
      const scheduled = async () => ((await apiCall(base, accountKey, 'GET', `/api/monitors/${monitorId}/runs`)).body as Array<{ id: string; trigger: string }>).filter((run) => run.trigger === 'schedule');
      await until('a scheduled run', async () => (await scheduled()).length >= 1, 150_000);
      const run = await apiCall(base, accountKey, 'GET', `/api/monitors/${monitorId}/runs/${(await scheduled())[0]!.id}`);
      expect(run.status, JSON.stringify(run.body)).to.equal(200);
      const page = run.body.pages[0];
      expect(page.outcome, JSON.stringify(page)).to.equal('baseline');
      expect(page.report.document.url, 'the picture is of the page behind the login').to.equal(`${login.origin}/account`);
      expect(page.journey.steps.map((step: { action: string; status: string }) => `${step.action}:${step.status}`)).to.deep.equal(['fill:ok', 'fill:ok', 'press:ok', 'waitFor:ok']);
      expect(page.verdict).to.deep.include({ failing: false, passed: ['text[0].contains'] });
      expect(login.logins[0], 'the form was posted by the renderer pod').to.deep.equal({ user: 'ada', ok: true });
      await until('Healthy=True', () => status().conditions?.find((condition) => condition.type === 'Healthy')?.status === 'True', 60_000, () => JSON.stringify(status()));
      const outputs = [JSON.stringify(run.body), kubectl(['get', resource, '--namespace', namespace, '-o', 'json']).stdout, JSON.stringify((await apiCall(base, accountKey, 'GET', `/api/monitors/${monitorId}`)).body)];
      for (const output of outputs) expect(output).to.not.include(LOGIN_PASSWORD);
      figures.push(`PageMonitor with a sign-in journey: scheduled run ${run.body.id}, steps ${page.journey.steps.map((step: { durationMs: number }) => `${step.durationMs} ms`).join(', ')}`);
    } finally {
      kubectl(['delete', resource, '--namespace', namespace, '--ignore-not-found', '--wait=true', '--timeout=60s']);
    }
  });

  it('hands over to the other operator pod when the leader is killed, which then reconciles', async () => {
    const first = leader();
    const started = performance.now();
    const killed = kubectl(['delete', 'pod', first, '--namespace', namespace, '--grace-period=0', '--force']);
    expect(killed.status, killed.output).to.equal(0);
    await until('another operator pod to lead', () => {
      const now = leader();
      return now !== '' && now !== first && pods(namespace, 'app.kubernetes.io/component=operator').some((pod) => pod.metadata.name === now && isReady(pod));
    }, 120_000, () => `leader ${leader()}\n${describePods(namespace)}`);
    figures.push(`leader killed: ${leader()} leads ${((performance.now() - started) / 1000).toFixed(1)} s later`);
    apply([site([`pages.${namespace}.svc.cluster.local`]), key('gadget')]);
    waitReady('site/storefront', 'apikey/gadget');
    const secret = Buffer.from(kubectl(['get', 'secret', 'gadget', '--namespace', namespace, '-o', 'jsonpath={.data.apiKey}']).stdout, 'base64').toString('utf8');
    const response = await hostedCapture(secret);
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
  });

  it('leaves no Lease of the release after helm uninstall (the operator Deployment owns it)', async () => {
    const lease = `${release}-viewfinder-operator`;
    expect(kubectl(['get', 'lease', lease, '--namespace', namespace, '-o', 'jsonpath={.metadata.ownerReferences[*].kind}']).stdout.trim()).to.equal('Deployment');
    // Sites and ApiKeys carry the operator's finalizer: deleted while the operator still runs.
    const deleted = kubectl(['delete', 'sites.viewfinder.dev,apikeys.viewfinder.dev', '--all', '--namespace', namespace, '--wait=true', '--timeout=60s']);
    expect(deleted.status, deleted.output).to.equal(0);
    const uninstalled = helm(['uninstall', release, '--namespace', namespace, '--wait']);
    expect(uninstalled.status, uninstalled.output).to.equal(0);
    await until('the garbage collector to delete the Lease', () => kubectl(['get', 'leases', '--namespace', namespace, '-o', 'name']).stdout.trim() === '', 120_000,
      () => kubectl(['get', 'leases', '--namespace', namespace, '-o', 'yaml']).stdout);
  });
});

/**
 * A shop's checkout page on the node's bridge address, where pods reach the host: healthy, it shows
 * a total; broken, it logs an error to the console and shows an error instead.
 */
async function startShop(): Promise<{ url: string; broken: boolean; close: () => Promise<void> }> {
  const shop = { url: '', broken: false, close: async () => {} };
  const server = http.createServer((_req, res) => {
    const body = shop.broken
      ? '<!doctype html><html lang="en"><title>Checkout</title><h1>Checkout</h1><p>Something went wrong</p><script>console.error("checkout: cart service answered 500")</script></html>'
      : '<!doctype html><html lang="en"><title>Checkout</title><h1>Checkout</h1><p>Total: 42.00 EUR</p></html>';
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, NODE_BRIDGE, resolve));
  shop.url = `http://${NODE_BRIDGE}:${(server.address() as AddressInfo).port}/checkout`;
  shop.close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return shop;
}
