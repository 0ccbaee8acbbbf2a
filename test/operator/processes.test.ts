import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { hashApiKey } from '../../lib/api-keys.ts';
import { openSqliteStore } from '../../lib/store/sqlite.ts';
import type { Account, Store } from '../../lib/store/store.ts';
import type { ApiKeyResource, SiteResource } from '../../operator/src/resources.ts';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';
import { startStubRenderer, type StubRendererService } from '../support/stub-renderer.ts';
import { OPERATOR_SERVICE_ACCOUNT, REAL_KUBECONFIG, Resources, ready, startRealTarget, waitFor, type KubeTarget } from './support.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';

const OPERATOR_MAIN = fileURLToPath(new URL('../../operator/src/main.ts', import.meta.url));

/**
 * Issue 20 on the real parts: a real kube-apiserver (test/cluster, KUBECONFIG), the hosted API
 * (services/api/src/main.ts, MODE=hosted on the embedded store) and the operator
 * (operator/src/main.ts) as separate processes. Only the API opens the store; the test opens the
 * same SQLite file as the admin CLI would, to create the account and to look behind the API.
 */
describe('operator and hosted API as separate processes, on a real cluster', function () {
  this.timeout(180_000);
  if (skippedWithoutCluster('the operator and the API as processes')) return;

  let target: KubeTarget;
  let kube: Resources;
  let renderer: StubRendererService;
  let dataDir: string;
  let store: Store;
  let account: Account;
  let apiPort: number;
  let api: ServiceProcess | undefined;
  let operators: ServiceProcess[];

  const startApi = async () => {
    api = await startServiceProcess(
      API_MAIN,
      { MODE: 'hosted', DATA_DIR: dataDir, OPERATOR_SERVICE_ACCOUNTS: `${target.namespace}/${OPERATOR_SERVICE_ACCOUNT}`, RENDERER_URL: renderer.url, KUBECONFIG: REAL_KUBECONFIG as string },
      { port: apiPort },
    );
  };
  const startOperator = async (apiUrl: string, serviceAccount = OPERATOR_SERVICE_ACCOUNT) => {
    const port = await freePort();
    // The operator's /readyz answers once its informers have listed and the API answers.
    const operator = await startServiceProcess(
      OPERATOR_MAIN,
      {
        API_URL: apiUrl,
        OPERATOR_SERVICE_ACCOUNT: `${target.namespace}/${serviceAccount}`,
        WATCH_NAMESPACE: target.namespace,
        OPERATOR_HOST: '127.0.0.1',
        OPERATOR_PORT: String(port),
        LEASE_NAME: `viewfinder-operator-${port}`,
        MAX_RETRY_DELAY_SECONDS: '1',
        KUBECONFIG: REAL_KUBECONFIG as string,
      },
      { port },
    );
    operators.push(operator);
    return operator;
  };
  const readyResource = <T extends SiteResource | ApiKeyResource>(kind: 'Site' | 'ApiKey', name: string) =>
    waitFor(
      `${kind} ${name} Ready`,
      async () => {
        const resource = await kube.get<T>(kind, name);
        return ready(resource)?.status === 'True' && resource?.status?.observedGeneration === resource?.metadata.generation ? resource : undefined;
      },
      600,
    );
  const reasonOf = (kind: 'Site' | 'ApiKey', name: string, reason: string) =>
    waitFor(
      `${kind} ${name} ${reason}`,
      async () => {
        const condition = ready(await kube.get<SiteResource | ApiKeyResource>(kind, name));
        return condition?.reason === reason ? condition : undefined;
      },
      600,
    );
  /** Each managed object exactly once in the store, and each Secret holding its key's current secret. */
  const expectNoDuplicates = async (sites: string[], keys: string[]) => {
    expect((await store.listSites(account.id)).map((site) => site.managedBy?.name).sort()).to.deep.equal([...sites].sort());
    const stored = await store.listKeys(account.id);
    expect(stored.map((key) => key.managedBy?.name).sort()).to.deep.equal([...keys].sort());
    for (const name of keys) {
      const plaintext = (await kube.secretKey(name)) as string;
      expect((await store.findKeyByHash(hashApiKey(plaintext)))?.managedBy?.name, `Secret ${name}`).to.equal(name);
    }
  };

  beforeEach(async () => {
    target = await startRealTarget();
    kube = new Resources(target);
    renderer = await startStubRenderer({ capacity: 1, delayMs: () => 0 });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-operator-processes-'));
    apiPort = await freePort();
    operators = [];
    await startApi();
    store = openSqliteStore({ dataDir });
    account = await store.createAccount({ name: 'Acme' });
  });
  afterEach(async () => {
    for (const operator of operators) await operator.stop();
    await api?.stop();
    await store.close();
    await renderer.close();
    rmSync(dataDir, { recursive: true, force: true });
    await target.close();
  });

  it("refuses a token that is not the operator's (another ServiceAccount, a garbage token, none), and changes nothing", async () => {
    const core = target.kubeConfig.makeApiClient(CoreV1Api);
    const tokenOf = async (name: string, audience = 'viewfinder-api') =>
      (await core.createNamespacedServiceAccountToken({ namespace: target.namespace, name, body: { spec: { audiences: [audience], expirationSeconds: 600 } } })).status?.token as string;
    const put = (token: string | undefined) =>
      fetch(`${api?.base}/api/operator/sites/${target.namespace}/storefront`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json', ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
        body: JSON.stringify({ accountId: account.id, uid: 'u', name: 'x', allowedDomains: ['evil.example'] }),
      });
    const refusals: Array<[string, string | undefined, number]> = [
      ['no token', undefined, 401],
      ['a garbage token', 'garbage', 401],
      ["the operator's token for the Kubernetes API's audience", await tokenOf(OPERATOR_SERVICE_ACCOUNT, 'https://kubernetes.default.svc.cluster.local'), 401],
      ['another ServiceAccount', await tokenOf('intruder'), 403],
    ];
    for (const [what, token, status] of refusals) {
      const answer = await put(token);
      expect(answer.status, what).to.equal(status);
      const body = (await answer.json()) as Record<string, unknown>;
      expect(body, what).to.deep.equal(status === 401 ? { error: body.error } : { success: false, error: `ServiceAccount ${target.namespace}/intruder is not trusted to manage Kubernetes-owned objects` });
    }

    // An operator running as another ServiceAccount reconciles nothing: its Site says why.
    await startOperator(`${api?.base}/`, 'intruder');
    await kube.createSite('storefront', { account: account.id, allowedDomains: ['example.com'] });
    const condition = await reasonOf('Site', 'storefront', 'ApiRefused');
    expect(condition.message).to.include('(403)').and.include(`ServiceAccount ${target.namespace}/intruder is not trusted`);
    expect(await store.listSites(account.id)).to.deep.equal([]);
  });

  it('goes ApiUnavailable when the API stops mid-reconcile, then Ready once it is back, with no duplicate site or key', async () => {
    const operator = await startOperator(`${api?.base}/`);
    await kube.createSite('storefront', { account: account.id, allowedDomains: ['example.com'] });
    for (const name of ['widget', 'admin', 'reports']) await kube.createApiKey(name, { account: account.id, ...(name === 'widget' ? { siteRef: 'storefront' } : {}) });
    // Stopped the moment the first object reaches the store: the other reconciles are under way.
    await waitFor('the site in the store', async () => (await store.listSites(account.id)).length > 0, 2000, 5);
    await api?.stop(0);
    await kube.createApiKey('late', { account: account.id });
    const condition = await reasonOf('ApiKey', 'late', 'ApiUnavailable');
    expect(condition.message).to.match(/^The API at http:\/\/127\.0\.0\.1:\d+ cannot be reached/);
    const readiness = await fetch(`${operator.base}/readyz`);
    expect(readiness.status).to.equal(503);
    expect(await readiness.json()).to.include({ reason: 'ApiUnavailable' });

    await startApi();
    await readyResource('Site', 'storefront');
    for (const name of ['widget', 'admin', 'reports', 'late']) await readyResource('ApiKey', name);
    await expectNoDuplicates(['storefront'], ['widget', 'admin', 'reports', 'late']);
    await waitFor('the operator ready again', async () => (await fetch(`${operator.base}/readyz`)).status === 200);
  });

  it('goes ApiUnavailable while the API answers 5xx (even after it acted), then Ready, with no duplicate site or key', async () => {
    // In front of the API: once the first key is created, its answer is lost as a 503, and so is every answer until `healed`.
    let failing = false;
    let healed = false;
    const proxy = await startProxy(api?.port as number, (method, url) => {
      if (!healed && method === 'PUT' && url.includes('/api/operator/keys/')) failing = true;
      return failing && !healed;
    });
    try {
      await startOperator(`${proxy.url}/`);
      await kube.createSite('storefront', { account: account.id, allowedDomains: ['example.com'] });
      await readyResource('Site', 'storefront');
      await kube.createApiKey('widget', { account: account.id, siteRef: 'storefront' });
      const condition = await reasonOf('ApiKey', 'widget', 'ApiUnavailable');
      expect(condition.message).to.match(/^The API answered 503/);
      // The API did create the key whose answer was lost.
      expect(await store.findKeyByManagedBy({ kind: 'ApiKey', namespace: target.namespace, name: 'widget' })).not.to.equal(null);
      await kube.patchSpec('Site', 'storefront', { allowedDomains: ['example.net'] });
      await reasonOf('Site', 'storefront', 'ApiUnavailable');
      expect(proxy.refused()).to.be.greaterThan(2);

      healed = true;
      await readyResource('ApiKey', 'widget');
      const site = await readyResource<SiteResource>('Site', 'storefront');
      expect((await store.getSite(site.status?.siteId as string))?.allowedDomains).to.deep.equal(['example.net']);
      await expectNoDuplicates(['storefront'], ['widget']);
    } finally {
      await proxy.close();
    }
  });
});

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A loopback proxy to the API that forwards every request and, while `fail(method, url)` says so,
 * replaces the API's answer with a 503 in the usual error shape (the request still reaches the API).
 */
async function startProxy(target: number, fail: (method: string, url: string) => boolean): Promise<{ url: string; refused(): number; close(): Promise<void> }> {
  let refused = 0;
  const server = http.createServer((req, res) => {
    const failing = fail(req.method ?? 'GET', req.url ?? '/');
    const upstream = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if (failing) {
        refused += 1;
        answer.resume();
        res.writeHead(503, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ success: false, error: 'Service unavailable (injected by the test proxy)' }));
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ success: false, error: 'Bad gateway' }));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
