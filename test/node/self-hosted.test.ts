import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { PNG } from 'pngjs';
import { expectEventually } from '../support/eventually.ts';
import {
  CHART,
  IMAGE_ARGS,
  allReady,
  buildAndLoadImage,
  bytesOf,
  capture,
  captureWhile,
  clusterIP,
  counterSum,
  deployPages,
  describePods,
  helm,
  isReady,
  kubectl,
  pods,
  describeOnRealNode,
  startChartPrometheus,
  until,
  type CaptureOutcome,
  type Pod,
} from './cluster.ts';

/**
 * The chart's self-hosted values on a real node (test/cluster/node): the image built with no
 * registry, pods in real containers with the chart's security context, probes and volumes, the API
 * reached through its Service's ClusterIP from the host, renderers found through EndpointSlices,
 * pod deletion and a rolling upgrade under load, Prometheus discovering the pods, and uninstall.
 * The tests run in order on one release; each step's figures are printed at the end.
 */
describeOnRealNode('the chart on a real node: self-hosted values', function (node) {

  const namespace = `viewfinder-test-${randomBytes(4).toString('hex')}-node`;
  const release = 'vf';
  const apiKey = randomBytes(24).toString('hex');
  const figures: string[] = [];
  const values = [`${CHART}/ci/self-hosted-values.yaml`];
  let page: { url: string; ip: string };
  let base: string;
  let valueArgs: string[];

  const RENDERERS = 3;
  const APIS = 2;
  const rendererPods = () => pods(namespace, `app.kubernetes.io/instance=${release},app.kubernetes.io/component=renderer`).filter((pod) => !pod.metadata.deletionTimestamp);
  const metricsOf = async (pod: Pod) => {
    const port = pod.spec.containers[0]?.ports?.[0]?.containerPort;
    const response = await fetch(`http://${pod.status.podIP}:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, text: await response.text() };
  };
  const captures = async (pod: Pod) => counterSum((await metricsOf(pod)).text, 'viewfinder_capture_duration_seconds_count');
  const summary = (outcomes: CaptureOutcome[]) => {
    const failed = outcomes.filter((outcome) => outcome.status !== 200);
    return { total: outcomes.length, failed: failed.length, errors: failed.map((outcome) => outcome.error) };
  };
  const install = (extra: string[] = []) => helm(['upgrade', '--install', release, CHART, '--namespace', namespace, ...valueArgs, ...extra, '--wait=false']);

  before(async function () {
    this.timeout(1_200_000);
    const image = buildAndLoadImage(node.stateDir);
    figures.push(`image build (tools/image/build.sh) ${image.buildSeconds.toFixed(0)} s, load into the node ${image.loadSeconds.toFixed(0)} s`);
    const created = kubectl(['create', 'namespace', namespace]);
    expect(created.status, created.output).to.equal(0);
    const secret = kubectl(['create', 'secret', 'generic', 'viewfinder-api-key', '--namespace', namespace, `--from-literal=apiKey=${apiKey}`]);
    expect(secret.status, secret.output).to.equal(0);
    page = await deployPages(namespace);
    valueArgs = [
      ...values.flatMap((file) => ['-f', file]),
      ...IMAGE_ARGS,
      '--set', `api.replicas=${APIS}`,
      '--set', `renderer.replicas=${RENDERERS}`,
      // The page is a pod of the cluster, behind a private ClusterIP: allowlisted for the test.
      '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([page.ip])}`,
    ];
  });

  after(async function () {
    this.timeout(300_000);
    if (figures.length > 0) console.log(`\n    real node, self-hosted values:\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=240s']);
  });

  it('installs, and every pod (2 APIs, 3 renderers) goes Ready with the chart\'s security context', async () => {
    const started = performance.now();
    const installed = install();
    expect(installed.status, installed.output).to.equal(0);
    await allReady(namespace, release, APIS + RENDERERS);
    figures.push(`helm install to all ${APIS + RENDERERS} pods Ready: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    for (const pod of pods(namespace, `app.kubernetes.io/instance=${release}`)) {
      expect(pod.status.containerStatuses?.[0]?.restartCount, `${pod.metadata.name} restarts`).to.equal(0);
    }
    base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
    // Ready pods are not yet a Service that answers: kube-proxy programs its endpoints a moment
    // later, and until then a connection to the ClusterIP is refused (seen once, 2026-11-27).
    await expectEventually(async () => expect((await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) })).status).to.equal(200), 30_000);
  });

  it("captures through the API Service's ClusterIP, from the host, a page served by a pod in the cluster: 200 and a real PNG", async () => {
    const timings: number[] = [];
    let last: CaptureOutcome | undefined;
    for (let i = 0; i < 5; i++) {
      last = await capture(base, apiKey, page.url);
      expect(last.status, last.error).to.equal(200);
      timings.push(last.ended - last.started);
    }
    const body = JSON.parse(last!.bytes!.toString('utf8')) as { success: boolean; image: string; width: number; height: number };
    // The default quality, standard: 1280x720.
    expect(body).to.include({ success: true, width: 1280, height: 720 });
    const [, base64] = /^data:image\/png;base64,(.+)$/.exec(body.image) ?? [];
    const png = PNG.sync.read(Buffer.from(base64 as string, 'base64'));
    expect([png.width, png.height]).to.deep.equal([1280, 720]);
    // busybox's page is black text on white: some pixels are dark, most are white.
    let dark = 0;
    for (let i = 0; i < png.data.length; i += 4) if ((png.data[i] as number) < 100) dark++;
    expect(dark, 'the page text is in the picture').to.be.above(50);
    const wrongKey = await capture(base, `${apiKey}x`, page.url);
    expect(wrongKey.status).to.equal(401);
    timings.sort((a, b) => a - b);
    figures.push(`capture through the Service (sequential, 5): median ${timings[2]} ms, min ${timings[0]} ms, max ${timings[4]} ms`);
  });

  it('answers /metrics on every pod, with viewfinder_ series', async () => {
    for (const pod of pods(namespace, `app.kubernetes.io/instance=${release}`)) {
      const { status, text } = await metricsOf(pod);
      expect(status, pod.metadata.name).to.equal(200);
      expect(text, pod.metadata.name).to.match(/^viewfinder_/m);
    }
  });

  it('sends 20 captures to the 3 renderers found through EndpointSlices: every pod serves a share', async () => {
    const renderers = rendererPods();
    expect(renderers).to.have.length(RENDERERS);
    const before = await Promise.all(renderers.map(captures));
    const outcomes: CaptureOutcome[] = [];
    for (let round = 0; round < 5; round++) outcomes.push(...(await Promise.all(Array.from({ length: 4 }, () => capture(base, apiKey, page.url)))));
    expect(summary(outcomes)).to.deep.include({ total: 20, failed: 0 });
    const shares = (await Promise.all(renderers.map(captures))).map((count, i) => count - (before[i] as number));
    figures.push(`20 captures, 4 clients, over 3 renderers: ${shares.join(' + ')}`);
    expect(shares.reduce((a, b) => a + b, 0)).to.equal(outcomes.length);
    for (const share of shares) expect(share, `shares ${shares.join(', ')}`).to.be.above(0);
  });

  it('deletes a renderer pod while 4 clients capture: failures only among captures in flight on it, none after', async () => {
    const victim = rendererPods()[0] as Pod;
    let deletedAt = 0;
    let replacedAt = 0;
    const outcomes = await captureWhile(4, base, apiKey, page.url, async () => {
      await new Promise((resolve) => setTimeout(resolve, 4000));
      deletedAt = Date.now();
      const deleted = kubectl(['delete', 'pod', victim.metadata.name, '--namespace', namespace, '--wait=false']);
      expect(deleted.status, deleted.output).to.equal(0);
      await until(
        'the deleted renderer to be gone and replaced by a Ready one',
        () => !pods(namespace).some((pod) => pod.metadata.name === victim.metadata.name) && rendererPods().filter(isReady).length === RENDERERS,
        180_000,
        () => describePods(namespace),
      );
      replacedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 5000));
    });
    const result = summary(outcomes);
    figures.push(`renderer pod deleted under 4 clients: ${result.failed} failed of ${result.total}; replaced (Ready) ${((replacedAt - deletedAt) / 1000).toFixed(1)} s after the delete`);
    // At most what it held (RENDER_CONCURRENCY 2) could fail, and only captures started before it went away.
    expect(result.failed, JSON.stringify(result.errors)).to.be.at.most(2);
    const late = outcomes.filter((outcome) => outcome.status !== 200 && outcome.started > replacedAt);
    expect(late, 'failures after the pod was replaced').to.deep.equal([]);
    expect(outcomes.filter((outcome) => outcome.started > replacedAt).length, 'captures after the replacement').to.be.above(0);
  });

  it('rolls every pod with helm upgrade (a changed value) while 4 clients capture: zero failed captures', async () => {
    const before = new Set(pods(namespace, `app.kubernetes.io/instance=${release}`).map((pod) => pod.metadata.name));
    let rolledIn = 0;
    const outcomes = await captureWhile(4, base, apiKey, page.url, async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const started = performance.now();
      valueArgs.push('--set', 'logLevel=debug');
      const upgraded = install();
      expect(upgraded.status, upgraded.output).to.equal(0);
      await until(
        'every pod replaced and Ready',
        () => {
          const current = pods(namespace, `app.kubernetes.io/instance=${release}`);
          return current.length === APIS + RENDERERS && current.every((pod) => isReady(pod) && !before.has(pod.metadata.name));
        },
        400_000,
        () => describePods(namespace),
      );
      rolledIn = (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 3000));
    });
    const result = summary(outcomes);
    figures.push(`helm upgrade (logLevel) under 4 clients: ${result.failed} failed of ${result.total}; every pod replaced in ${rolledIn.toFixed(0)} s`);
    expect(result, JSON.stringify(result.errors)).to.deep.include({ failed: 0 });
    expect(result.total).to.be.above(4);
  });

  it("keeps each API pod's resident memory, after all those captures, below the memory it requests", async () => {
    for (const pod of pods(namespace, `app.kubernetes.io/instance=${release},app.kubernetes.io/component=api`)) {
      const rss = counterSum((await metricsOf(pod)).text, 'viewfinder_process_resident_memory_bytes');
      const requested = bytesOf(pod.spec.containers[0]?.resources?.requests?.memory ?? '0');
      figures.push(`${pod.metadata.name}: RSS ${(rss / 2 ** 20).toFixed(0)} MiB, request ${(requested / 2 ** 20).toFixed(0)} MiB`);
      expect(rss, pod.metadata.name).to.be.above(0).and.below(requested);
    }
  });

  it('keeps the API in its Service while every renderer is down: captures answer 503 with Retry-After, not a refused connection', async () => {
    const apiSelector = `app.kubernetes.io/instance=${release},app.kubernetes.io/component=api`;
    const down = install(['--set', 'renderer.replicas=0']);
    expect(down.status, down.output).to.equal(0);
    await until('every renderer pod gone', () => pods(namespace, `app.kubernetes.io/instance=${release},app.kubernetes.io/component=renderer`).length === 0, 180_000, () => describePods(namespace));
    // The API's readiness probe fails after 2 periods of 5 s: wait past that.
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    expect(pods(namespace, apiSelector).filter(isReady), 'API pods still Ready').to.have.length(APIS);
    const outage = await capture(base, apiKey, page.url);
    expect({ status: outage.status, error: outage.error }).to.deep.equal({ status: 503, error: '503 (Retry-After 5) {"success":false,"error":"Service unavailable: no renderer is ready"}' });
    const back = install();
    expect(back.status, back.output).to.equal(0);
    await allReady(namespace, release, APIS + RENDERERS);
    await until('a capture to succeed again', async () => (await capture(base, apiKey, page.url)).status === 200, 60_000);
  });

  it("is scraped by Debian's Prometheus through the cluster's EndpointSlices (the ServiceMonitor's selectors), a viewfinder_ series per pod, and loads the chart's PrometheusRule", async () => {
    const prometheus = await startChartPrometheus(release, namespace, valueArgs);
    try {
      const expected = pods(namespace, `app.kubernetes.io/instance=${release}`).map((pod) => pod.metadata.name).sort();
      let seen: string[] = [];
      await until(
        'a viewfinder_ series for every pod',
        async () => {
          seen = (await prometheus.query('count by (pod) ({__name__=~"viewfinder_.+"})')).map((sample) => sample.metric.pod!).sort();
          return JSON.stringify(seen) === JSON.stringify(expected);
        },
        90_000,
        () => `seen ${seen.join(', ')}; expected ${expected.join(', ')}\n${prometheus.output()}`,
      );
      const rules = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ name: string; rules: unknown[] }> } };
      expect(rules.data.groups.map((group) => group.name).sort()).to.deep.equal(prometheus.rules.groups.map((group) => group.name).sort());
      expect(rules.data.groups.every((group) => group.rules.length > 0)).to.equal(true);
      const ups = (await prometheus.query('up')).map((sample) => sample.value[1]);
      expect(ups).to.satisfy((values: string[]) => values.length === expected.length && values.every((up) => up === '1'));
    } finally {
      await prometheus.close();
    }
  });

  it('leaves nothing of the release after helm uninstall (self-hosted mode keeps no volume)', async () => {
    const uninstalled = helm(['uninstall', release, '--namespace', namespace, '--wait', '--timeout', '5m']);
    expect(uninstalled.status, uninstalled.output).to.equal(0);
    const kinds = kubectl(['api-resources', '--verbs=list', '--namespaced', '-o', 'name']).stdout.trim().split('\n').filter((kind) => kind !== 'events' && kind !== 'events.events.k8s.io');
    await until(
      'no object of the release left',
      () => {
        const left = kubectl(['get', kinds.join(','), '--namespace', namespace, '-l', `app.kubernetes.io/instance=${release}`, '-o', 'name']);
        return left.status === 0 && left.stdout.trim() === '';
      },
      180_000,
      () => kubectl(['get', kinds.join(','), '--namespace', namespace, '-o', 'name']).output,
    );
    // Unlabelled leftovers too (EndpointSlices, ReplicaSets, Secrets of Helm): only the test's own objects remain.
    const all = kubectl(['get', kinds.join(','), '--namespace', namespace, '-o', 'name']).stdout.trim().split('\n');
    const ours = /^(deployment\.apps|replicaset\.apps|pod|service|endpoints|endpointslice\.discovery\.k8s\.io)\/pages|^secret\/viewfinder-api-key$|^serviceaccount\/default$|^configmap\/kube-root-ca\.crt$/;
    expect(all.filter((name) => !ours.test(name))).to.deep.equal([]);
  });
});
