import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startLoggingPages } from '../support/logging-pages.ts';
import { freshMongoUri } from '../support/store-backends.ts';
import {
  CHART,
  IMAGE_ARGS,
  NODE_BRIDGE,
  allReady,
  apiCall,
  buildAndLoadImage,
  capture,
  clusterIP,
  createSecret,
  describeOnRealNode,
  helm,
  isReady,
  kubectl,
  podBase,
  pods,
  startFerretDBOnBridge,
  until,
} from './cluster.ts';

/**
 * Self-hosted mode with 2 API replicas on the real node. Without MongoDB each replica would keep
 * asynchronous captures in its own DATA_DIR, so the chart turns them off (api.asyncCaptures.enabled
 * auto) and says so: POST /captures answers 503 through the Service and through every pod, while
 * /screenshot works. Upgraded onto an external MongoDB (FerretDB on the node's bridge address, its
 * URI in a Secret), they are on, and a capture submitted through the Service reads the same
 * through every replica.
 */
describeOnRealNode('the chart on a real node: self-hosted mode with 2 API replicas, asynchronous captures', function (node) {
  const namespace = `viewfinder-test-${randomBytes(4).toString('hex')}-replicas`;
  const release = 'vfr';
  const apiKey = randomBytes(24).toString('hex');
  const figures: string[] = [];
  let ferret: ReturnType<typeof startFerretDBOnBridge> | undefined;
  let pages: Awaited<ReturnType<typeof startLoggingPages>> | undefined;
  let base: string;

  const values = [
    '-f', `${CHART}/ci/self-hosted-values.yaml`,
    ...IMAGE_ARGS,
    '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([NODE_BRIDGE])}`,
  ];
  const apiPods = () => pods(namespace, 'app.kubernetes.io/component=api').filter(isReady);
  const call = (at: string, method: string, route: string, body?: unknown) => apiCall(at, apiKey, method, route, body);
  const notesOf = (output: string) => output.slice(output.indexOf('NOTES:'));

  before(async function () {
    this.timeout(1_200_000);
    buildAndLoadImage(node.stateDir);
    ferret = startFerretDBOnBridge();
    pages = await startLoggingPages(NODE_BRIDGE);
    const created = kubectl(['create', 'namespace', namespace]);
    expect(created.status, created.output).to.equal(0);
    createSecret(namespace, 'viewfinder-api-key', { apiKey });
    createSecret(namespace, 'external-mongodb', { 'mongodb-uri': freshMongoUri(ferret.uri, 'viewfinder_node_self_hosted') });
  });

  after(async function () {
    this.timeout(300_000);
    if (figures.length > 0) console.log(`\n    real node, self-hosted mode with 2 API replicas:\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=240s']);
    await pages?.close();
    ferret?.stop();
  });

  it('without MongoDB: NOTES.txt says asynchronous captures are off, POST /captures answers 503 through the Service and every pod, /screenshot answers 200', async () => {
    const installed = helm(['install', release, CHART, '--namespace', namespace, '--skip-crds', ...values]);
    expect(installed.status, installed.output).to.equal(0);
    expect(notesOf(installed.stdout)).to.include('Asynchronous captures are OFF: 2 self-hosted API replicas without MongoDB');
    await allReady(namespace, release, 3);
    base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
    const replicas = apiPods();
    expect(replicas).to.have.length(2);
    for (const at of [base, ...replicas.map(podBase)]) {
      const refused = await call(at, 'POST', '/captures', { url: pages!.url('off') });
      expect(refused.status, `${at}: ${JSON.stringify(refused.body)}`).to.equal(503);
      expect(refused.body).to.deep.equal({ success: false, error: 'Asynchronous captures are unavailable on this service (ASYNC_CAPTURES=false, or DATA_DIR is not writable: see the log)' });
    }
    const captured = await capture(base, apiKey, pages!.url('sync'));
    expect(captured.status, captured.error).to.equal(200);
    figures.push(`asynchronous captures off: POST /captures 503 through the Service and both pods; /screenshot 200`);
  });

  it('upgraded onto an external MongoDB: on, and a capture submitted through the Service reads the same through both replicas', async () => {
    const upgraded = helm(['upgrade', release, CHART, '--namespace', namespace, '--skip-crds', ...values, '--set', 'mongodb.external.existingSecret=external-mongodb', '--wait', '--timeout', '5m']);
    expect(upgraded.status, upgraded.output).to.equal(0);
    expect(notesOf(upgraded.stdout)).to.include('Asynchronous captures (POST /captures) keep their jobs in MongoDB, shared by the 2 API replica(s)');
    await allReady(namespace, release, 3);
    const replicas = apiPods();
    expect(replicas).to.have.length(2);
    const submitted = await call(base, 'POST', '/captures', { url: pages!.url('shared') });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    const id = submitted.body.id as string;
    for (const pod of replicas) {
      const seen = await call(podBase(pod), 'GET', `/captures/${id}`);
      expect(seen.status, `${pod.metadata.name}: ${JSON.stringify(seen.body)}`).to.equal(200);
      expect(seen.body.id).to.equal(id);
    }
    await until('the capture to succeed', async () => (await call(base, 'GET', `/captures/${id}`)).body.status === 'succeeded', 120_000);
    const done = await Promise.all(replicas.map((pod) => call(podBase(pod), 'GET', `/captures/${id}`)));
    expect(done.map((answer) => answer.body.status)).to.deep.equal(['succeeded', 'succeeded']);
    expect(new Set(done.map((answer) => answer.body.result?.image)).size, 'one result, the same through both').to.equal(1);
    expect(done[0]!.body.result.image).to.match(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(pages!.requests('shared'), 'captured once').to.have.length(1);
    figures.push(`on MongoDB: capture ${id} submitted through the Service, read through ${replicas.map((pod) => pod.metadata.name).join(' and ')}: succeeded on both, page loaded once`);
  });
});
