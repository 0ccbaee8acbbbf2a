import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { expectEventually } from '../support/eventually.ts';
import { parentOf, spanTree, tag, tracesOf, type JaegerSpan, type JaegerTrace } from '../support/jaeger.ts';
import { startLoggingPages } from '../support/logging-pages.ts';
import { CHART, IMAGE_ARGS, NODE_BRIDGE, allReady, buildAndLoadImage, capture, clusterIP, createSecret, describeOnRealNode, helm, isReady, kubectl, pods, startJaegerOnBridge } from './cluster.ts';

/**
 * Tracing on the real node (docs/operations.md, "Tracing"): the chart's self-hosted values with a
 * renderer Deployment, `tracing.otlpEndpoint` pointing at a Jaeger on the node's bridge address
 * (test/cluster/jaeger.sh), which the renderers' NetworkPolicy opens through `tracing.receiverTo`.
 * A capture through the API's Service is one trace in Jaeger, its spans from the API pod and from
 * the renderer pod, joined by the traceparent the API sent to the renderer pod's address.
 */
describeOnRealNode('the chart on a real node: a capture through the Service is one trace across the API pod and the renderer pod', function (node) {
  const namespace = `viewfinder-test-${randomBytes(4).toString('hex')}-tracing`;
  const release = 'vft';
  const apiKey = randomBytes(24).toString('hex');
  const figures: string[] = [];
  let jaeger: ReturnType<typeof startJaegerOnBridge> | undefined;
  let pages: Awaited<ReturnType<typeof startLoggingPages>> | undefined;

  before(async function () {
    this.timeout(1_200_000);
    buildAndLoadImage(node.stateDir);
    jaeger = startJaegerOnBridge();
    pages = await startLoggingPages(NODE_BRIDGE);
    const created = kubectl(['create', 'namespace', namespace]);
    expect(created.status, created.output).to.equal(0);
    createSecret(namespace, 'viewfinder-api-key', { apiKey });
  });

  after(async function () {
    this.timeout(300_000);
    if (figures.length > 0) console.log(`\n    real node, tracing:\n${figures.map((line) => `      ${line}`).join('\n')}\n`);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=240s']);
    await pages?.close();
    jaeger?.stop();
  });

  it('captures through the Service: Jaeger holds one trace with the API pod\'s request and dispatch and the renderer pod\'s capture under it', async () => {
    const installed = helm([
      'install', release, CHART, '--namespace', namespace, '--skip-crds',
      '-f', `${CHART}/ci/self-hosted-values.yaml`,
      ...IMAGE_ARGS,
      '--set', 'api.replicas=1',
      '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([NODE_BRIDGE])}`,
      '--set', `tracing.otlpEndpoint=${jaeger!.otlpEndpoint}`,
      '--set', 'tracing.sampler=parentbased_always_on',
      '--set', `tracing.port=${jaeger!.otlpPort}`,
      '--set-json', `tracing.receiverTo=${JSON.stringify([{ ipBlock: { cidr: `${NODE_BRIDGE}/32` } }])}`,
    ]);
    expect(installed.status, installed.output).to.equal(0);
    await allReady(namespace, release, 2);
    const [apiPod] = pods(namespace, 'app.kubernetes.io/component=api').filter(isReady);
    const [rendererPod] = pods(namespace, 'app.kubernetes.io/component=renderer').filter(isReady);
    expect(apiPod?.status.podIP).to.be.a('string');
    expect(rendererPod?.status.podIP).to.be.a('string');

    const base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
    const captured = await capture(base, apiKey, pages!.url('traced'));
    expect(captured.status, captured.error).to.equal(200);

    let trace: JaegerTrace | undefined;
    await expectEventually(async () => {
      const traces = (await tracesOf('viewfinder-api', jaeger!.query)).filter((candidate) => candidate.spans.some((span) => span.operationName === 'POST /screenshot' && !parentOf(candidate, span)));
      expect(traces).to.have.length(1);
      trace = traces[0]!;
      expect(trace.spans.map((span) => span.operationName)).to.include.members(['viewfinder.dispatch', 'POST', 'POST /v1/captures', 'renderer.capture', 'renderer.navigation', 'renderer.encode']);
    }, 120_000);
    const found = trace!;
    const named = (name: string): JaegerSpan => found.spans.find((span) => span.operationName === name)!;
    const serviceOf = (span: JaegerSpan) => found.processes[span.processID]?.serviceName;
    const tree = spanTree(found);
    // One root: every span has its parent in the trace.
    expect(found.spans.filter((span) => !parentOf(found, span)).map((span) => span.operationName), tree).to.deep.equal(['POST /screenshot']);
    expect(serviceOf(named('POST /screenshot')), tree).to.equal('viewfinder-api');
    expect(serviceOf(named('viewfinder.dispatch')), tree).to.equal('viewfinder-api');
    expect(tag(named('viewfinder.dispatch'), 'viewfinder.renderer')).to.equal('remote');
    // The API pod's exchange went to the renderer pod's address, whose server span is its child.
    const client = named('POST');
    expect(serviceOf(client), tree).to.equal('viewfinder-api');
    expect(tag(client, 'server.address'), tree).to.equal(rendererPod!.status.podIP);
    const server = named('POST /v1/captures');
    expect(serviceOf(server), tree).to.equal('viewfinder-renderer');
    expect(parentOf(found, server)?.spanID, tree).to.equal(client.spanID);
    for (const name of ['renderer.capture', 'renderer.navigation', 'renderer.encode']) expect(serviceOf(named(name)), `${name}\n${tree}`).to.equal('viewfinder-renderer');
    // The API pod's access-log line carries the trace's id.
    const logs = kubectl(['logs', '--namespace', namespace, apiPod!.metadata.name]);
    expect(logs.stdout).to.match(new RegExp(`"trace_id":"${found.traceID}".*"msg":"Served a request"`));
    figures.push(`capture through the Service, trace ${found.traceID} (API pod ${apiPod!.metadata.name}, renderer pod ${rendererPod!.metadata.name} at ${rendererPod!.status.podIP}):`, ...tree.split('\n').map((line) => `  ${line}`));
  });
});
