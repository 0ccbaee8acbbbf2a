import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
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
} from './cluster.ts';

/**
 * Hosted values on the embedded store, on the real node: the operator's two pods (one leader)
 * reconcile a Site and an ApiKey applied with kubectl through the API, the key from the Secret
 * captures through the API Service, a domain change answers 403, a deleted ApiKey 401, and
 * killing the leader hands over to the other pod.
 */
describeOnRealNode('the chart on a real node: hosted values on the embedded store', function (node) {

  const namespace = `viewfinder-test-${randomBytes(4).toString('hex')}-hosted`;
  const release = 'vfh';
  const figures: string[] = [];
  let page: { url: string; ip: string };
  let base: string;
  let account: string;
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
  });

  after(async function () {
    this.timeout(300_000);
    if (figures.length > 0) console.log(`\n    real node, hosted values (embedded store):\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    // Sites and ApiKeys carry the operator's finalizer: delete them while the operator still runs.
    kubectl(['delete', 'sites.viewfinder.dev,apikeys.viewfinder.dev', '--all', '--namespace', namespace, '--wait=true', '--timeout=60s']);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=240s']);
  });

  it('installs: the API, a renderer and two operator pods go Ready, one operator leads', async () => {
    const started = performance.now();
    const installed = helm([
      'install', release, CHART, '--namespace', namespace,
      '-f', `${CHART}/ci/embedded-values.yaml`,
      ...IMAGE_ARGS,
      ...ONE_SMALL_RENDERER,
      '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([page.ip])}`,
      '--set', `operator.watchNamespaces={${namespace}}`,
    ]);
    expect(installed.status, installed.output).to.equal(0);
    await allReady(namespace, release, 4);
    figures.push(`helm install to all 4 pods Ready: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await until('an operator pod to hold the Lease', () => pods(namespace, 'app.kubernetes.io/component=operator').some((pod) => pod.metadata.name === leader()), 60_000);
    base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
    account = createAccount(namespace, release, 'Acme').id;
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
