import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startAddons, type Addons } from './addons.ts';
import {
  CHART,
  CaptureLoad,
  IMAGE_ARGS,
  allReady,
  buildAndLoadImage,
  capturesServed,
  clusterIP,
  deployPages,
  describeOnRealNode,
  describePods,
  helm,
  isReady,
  kubectl,
  pods,
  until,
  type CaptureOutcome,
  type Pod,
} from './cluster.ts';

/**
 * The chart's busy-slot autoscaling on a real node, end to end: Prometheus discovers and scrapes
 * the renderers, KEDA reads their busy slots and drives the HPA it creates, the HPA scales the
 * Deployment, and metrics-server gives `kubectl top` and the CPU trigger. A short ramp checks the
 * behaviour only (it scales up, a new renderer serves, it scales down, and no capture fails while
 * renderers go); `make bench-autoscale` runs the full ramp and measures it (docs/scaling.md).
 */
describeOnRealNode('the chart on a real node: renderers autoscale on busy slots (KEDA, Prometheus, metrics-server)', function (node) {
  // VIEWFINDER_TEST_NAMESPACE_PREFIX: a prefix of one's own on a node that several clones share.
  const namespace = `${process.env.VIEWFINDER_TEST_NAMESPACE_PREFIX ?? 'viewfinder-test-'}${randomBytes(4).toString('hex')}-scale`;
  const release = 'vf';
  const apiKey = randomBytes(24).toString('hex');
  const figures: string[] = [];
  const rendererSelector = `app.kubernetes.io/instance=${release},app.kubernetes.io/component=renderer`;
  const deployment = `${release}-viewfinder-renderer`;
  // Each capture holds its slot 2 s after the page has loaded, as a page that waits on the network
  // does: busy slots at little CPU, which is what this signal is for.
  const SLOW = { wait: 2000 };
  let addons: Addons | undefined;
  let base: string;
  let pageUrl: string;

  const renderers = () => pods(namespace, rendererSelector).filter((pod) => !pod.metadata.deletionTimestamp);
  const desiredReplicas = () => Number(kubectl(['get', 'deployment', deployment, '--namespace', namespace, '-o', 'jsonpath={.spec.replicas}']).stdout);
  const failures = (outcomes: CaptureOutcome[]) => outcomes.filter((outcome) => outcome.status !== 200).map((outcome) => outcome.error);
  const scaling = () => `${describePods(namespace)}\n${kubectl(['get', 'scaledobject,hpa', '--namespace', namespace, '-o', 'wide']).output}`;

  before(async function () {
    this.timeout(3_600_000);
    const image = buildAndLoadImage(node.stateDir);
    figures.push(`image build ${image.buildSeconds.toFixed(0)} s, load ${image.loadSeconds.toFixed(0)} s`);
    const created = kubectl(['create', 'namespace', namespace]);
    expect(created.status, created.output).to.equal(0);
    // 5 s scrapes: the test waits less for the signal; the chart's ServiceMonitor scrapes every 30 s.
    addons = startAddons({ namespace: `${namespace}-addons`, scrapeNamespaces: [namespace], scrapeInterval: '5s' });
    figures.push(`add-ons built (or found in the cache) and started in ${addons.startSeconds.toFixed(0)} s`);
    const secret = kubectl(['create', 'secret', 'generic', 'viewfinder-api-key', '--namespace', namespace, `--from-literal=apiKey=${apiKey}`]);
    expect(secret.status, secret.output).to.equal(0);
    const page = await deployPages(namespace);
    pageUrl = page.url;
    const installed = helm([
      'upgrade', '--install', release, CHART, '--namespace', namespace, '--wait=false', '--skip-crds',
      '-f', `${CHART}/ci/self-hosted-values.yaml`,
      ...IMAGE_ARGS,
      '--set', 'api.replicas=1',
      '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([page.ip])}`,
      '--set', 'renderer.autoscaling.enabled=true',
      '--set', 'renderer.autoscaling.signal=busySlots',
      '--set', `renderer.autoscaling.prometheusServerAddress=${addons.prometheusUrl}`,
      '--set', 'renderer.autoscaling.minReplicas=1',
      '--set', 'renderer.autoscaling.maxReplicas=3',
      // KEDA's second trigger is CPU at 70% of the request: one client of these pages takes a
      // renderer to about 290m, above 70% of the small-node values' 250m, which held 2 renderers.
      '--set', 'renderer.resources.requests.cpu=500m',
      // Short windows, so that the ramp is short: the test checks what happens, not when.
      '--set', 'renderer.autoscaling.pollingIntervalSeconds=5',
      '--set', 'renderer.autoscaling.scaleDown.stabilizationWindowSeconds=20',
      '--set', 'renderer.autoscaling.scaleDown.periodSeconds=15',
    ]);
    expect(installed.status, installed.output).to.equal(0);
    await allReady(namespace, release, 2, 300_000);
    base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
  });

  after(async function () {
    this.timeout(600_000);
    if (figures.length > 0) console.log(`\n    real node, autoscaling:\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=300s']);
    addons?.stop();
  });

  it('has KEDA take the ScaledObject (Ready, its HPA at the minimum of 1 renderer)', async () => {
    await until(
      'the ScaledObject Ready and its HPA created',
      () => {
        const scaled = JSON.parse(kubectl(['get', 'scaledobject', deployment, '--namespace', namespace, '-o', 'json']).stdout || '{}');
        const ready = (scaled.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
        return ready && kubectl(['get', 'hpa', `keda-hpa-${deployment}`, '--namespace', namespace]).status === 0;
      },
      180_000,
      scaling,
    );
    expect(renderers().filter(isReady)).to.have.length(1);
  });

  it('shows every pod of the release in `kubectl top pods` (metrics-server through the aggregation layer)', async () => {
    const expected = pods(namespace, `app.kubernetes.io/instance=${release}`).map((pod) => pod.metadata.name).sort();
    let listed = '';
    await until(
      'kubectl top to list every pod of the release',
      () => {
        const top = kubectl(['top', 'pods', '--namespace', namespace, '-l', `app.kubernetes.io/instance=${release}`, '--no-headers']);
        listed = top.output;
        return top.status === 0 && JSON.stringify(top.stdout.trim().split('\n').map((line) => line.split(/\s+/)[0]).sort()) === JSON.stringify(expected);
      },
      180_000,
      () => listed,
    );
    figures.push(`kubectl top pods:\n        ${listed.trim().split('\n').join('\n        ')}`);
  });

  it('adds renderers under 6 clients of slow pages, and a new renderer serves captures', async () => {
    const first = new Set(renderers().map((pod) => pod.metadata.name));
    const load = new CaptureLoad(base, apiKey, pageUrl, SLOW);
    load.setClients(6);
    let newcomer: Pod | undefined;
    try {
      await until(
        'a renderer added by the autoscaler to serve a capture',
        async () => {
          for (const pod of renderers().filter((pod) => !first.has(pod.metadata.name) && isReady(pod))) {
            if ((await capturesServed(pod)) > 0) newcomer = pod;
          }
          return newcomer !== undefined;
        },
        420_000,
        scaling,
      );
    } finally {
      await load.stop();
    }
    figures.push(`scale-up under 6 clients: ${desiredReplicas()} renderers wanted; ${newcomer?.metadata.name} served; ${load.outcomes.length} captures, ${failures(load.outcomes).length} not 200 (${[...new Set(failures(load.outcomes))].join('; ')})`);
    expect(desiredReplicas()).to.be.above(1);
  });

  it('removes renderers back to 1 when the load falls to one client, and no capture fails while they drain', async () => {
    const load = new CaptureLoad(base, apiKey, pageUrl, SLOW);
    load.setClients(1);
    const before = renderers().length;
    let outcomes: CaptureOutcome[];
    try {
      await until('the renderers back to 1, the others gone', () => desiredReplicas() === 1 && pods(namespace, rendererSelector).length === 1, 420_000, scaling);
      // A few more captures on the one left.
      const served = load.outcomes.length;
      await until('two more captures', () => load.outcomes.length >= served + 2, 60_000);
    } finally {
      outcomes = await load.stop();
    }
    figures.push(`scale-down from ${before} renderers under 1 client: ${outcomes.length} captures, ${failures(outcomes).length} failed`);
    expect(before).to.be.above(1);
    expect(failures(outcomes), 'captures that failed while renderers were removed').to.deep.equal([]);
    expect(outcomes.length).to.be.above(2);
  });
});
