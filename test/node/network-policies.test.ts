import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import {
  CHART,
  IMAGE,
  IMAGE_ARGS,
  ONE_SMALL_RENDERER,
  REPO,
  RESTRICTED_CONTAINER,
  RESTRICTED_POD,
  allReady,
  apiCall,
  buildAndLoadImage,
  clusterIP,
  deployPages,
  describePods,
  describeOnRealNode,
  helm,
  isReady,
  kubectl,
  pods,
  until,
  type Pod,
} from './cluster.ts';

/**
 * The chart's NetworkPolicies, enforced on the real node by kube-network-policies
 * (test/cluster/network-policies.sh starts the agent and the test hosts for this leg alone), checked
 * from inside real pods as docs/install-kubernetes.md states them:
 * - the renderer reaches a page server outside the cluster's ranges, and DNS, and nothing else: not
 *   the Kubernetes API (its Service or its endpoint), not the API's pods, not another namespace's pod
 *   or Service, not the node's own address, not 169.254.169.254;
 * - the API reaches the renderers; the operator reaches the API's pods, DNS and the Kubernetes API on
 *   kubernetesApiPorts, and nothing else; only the scrapers (and the API) reach the renderer and
 *   operator ports, and only the ingress controller, the scrapers and the operator the API's;
 * - with all of that enforced the chart still works: the operator reconciles a Site and an ApiKey, and
 *   the key captures the outside page through the API Service.
 * A pod in a namespace without policies reaches every target first, so that "blocked" means the
 * policy, not a target that was down.
 */
describeOnRealNode('the chart on a real node: NetworkPolicies enforced', function (node) {
  const suffix = randomBytes(4).toString('hex');
  const namespace = `viewfinder-test-${suffix}-np`;
  const other = `viewfinder-test-${suffix}-np-other`;
  const ingress = `viewfinder-test-${suffix}-np-ingress`;
  const release = 'vfnp';
  const agentState = `/tmp/vf-np-${suffix}`;
  const script = `${REPO}test/cluster/network-policies.sh`;
  const figures: string[] = [];
  let hosts: Record<string, string> = {};
  let account = '';

  /** Pods of the image that only wait, as vantage points: the control, a scraper, an ingress controller. */
  const vantagePod = (name: string, podNamespace: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: podNamespace, labels: { app: name, ...labels } },
    spec: {
      securityContext: RESTRICTED_POD,
      containers: [{ name: 'probe', image: `${IMAGE.repository}:${IMAGE.tag}`, imagePullPolicy: 'Never', securityContext: RESTRICTED_CONTAINER, command: ['node', '-e', 'setInterval(() => {}, 1 << 30)'] }],
    },
  });
  const apply = (objects: unknown[], where?: string) => {
    const applied = kubectl(['apply', ...(where ? ['--namespace', where] : []), '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    expect(applied.status, applied.output).to.equal(0);
  };
  const onePod = (where: string, selector: string): Pod => {
    const found = pods(where, selector).find(isReady);
    if (!found) throw new Error(`no Ready pod ${selector} in ${where}\n${describePods(where)}`);
    return found;
  };
  const address = (pod: Pod, port?: number) => `${pod.status.podIP}:${port ?? pod.spec.containers[0]?.ports?.[0]?.containerPort}`;

  /**
   * From inside `pod`: for each target, "open" when a TCP connection is made within 4 s, else why not
   * ("timeout": a policy dropped it; "ECONNREFUSED": reached, but nothing listens). `dns` resolves a name.
   */
  const PROBE = `
    const net = require('node:net'), dns = require('node:dns').promises;
    const targets = JSON.parse(process.argv[1]);
    const one = ([name, target]) => name === 'dns'
      ? dns.lookup(target).then(() => [name, 'open'], (err) => [name, err.code])
      : new Promise((resolve) => {
          const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
          const socket = net.connect({ host, port });
          const done = (outcome) => { socket.destroy(); resolve([name, outcome]); };
          socket.setTimeout(4000, () => done('timeout'));
          socket.on('connect', () => done('open'));
          socket.on('error', (err) => done(err.code));
        });
    Promise.all(Object.entries(targets).map(one)).then((results) => console.log(JSON.stringify(Object.fromEntries(results))));
  `;
  const probe = (pod: Pod, where: string, targets: Record<string, string>): Record<string, string> => {
    const ran = kubectl(['exec', '--namespace', where, pod.metadata.name, '--', 'node', '-e', PROBE, JSON.stringify(targets)]);
    expect(ran.status, ran.output).to.equal(0);
    return JSON.parse(ran.stdout.trim().split('\n').at(-1) ?? '{}');
  };
  const outcomes = (expected: Record<string, 'open' | 'blocked'>, got: Record<string, string>) =>
    Object.fromEntries(Object.keys(expected).map((name) => [name, got[name] === 'open' ? 'open' : got[name] === 'timeout' ? 'blocked' : `unexpected: ${got[name]}`]));

  let targets: Record<string, string>;

  before(async function () {
    this.timeout(1_200_000);
    buildAndLoadImage(node.stateDir);
    const up = spawnSync(script, ['up', agentState], { env: process.env, encoding: 'utf8' });
    expect(up.status, `${up.stdout}${up.stderr}`).to.equal(0);
    hosts = Object.fromEntries(up.stdout.trim().split('\n').filter((line) => line.startsWith('NETPOL_')).map((line) => line.split('=', 2) as [string, string]));
    for (const name of [namespace, other, ingress]) expect(kubectl(['create', 'namespace', name]).status).to.equal(0);
    account = 'np-account';
  });

  after(async function () {
    this.timeout(300_000);
    if (figures.length > 0) console.log(`\n    real node, NetworkPolicies enforced:\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    // The agent first: the node's other legs must not meet it, whatever the cleanup below takes.
    spawnSync(script, ['down', agentState], { env: process.env, encoding: 'utf8' });
    rmSync(agentState, { recursive: true, force: true });
    kubectl(['delete', 'sites.viewfinder.dev,apikeys.viewfinder.dev', '--all', '--namespace', namespace, '--wait=true', '--timeout=60s']);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    for (const name of [namespace, other, ingress]) kubectl(['delete', 'namespace', name, '--wait=true', '--timeout=240s']);
  });

  it('installs hosted mode with every policy on (the API behind a trusted proxy, the operator on the node API port)', async () => {
    const started = performance.now();
    const installed = helm([
      'install', release, CHART, '--namespace', namespace,
      '-f', `${CHART}/ci/embedded-values.yaml`,
      ...IMAGE_ARGS,
      ...ONE_SMALL_RENDERER,
      '--set', `operator.watchNamespaces={${namespace}}`,
      // The outside page is on TEST-NET-2, which the renderer's own guard refuses unless allowlisted.
      '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([hosts.NETPOL_WEB?.split(':')[0]])}`,
      // The API's policy is rendered while it trusts X-Forwarded-* (behind an ingress controller).
      '--set', 'api.trustProxy=true',
      '--set-json', `api.networkPolicy.ingressControllerFrom=${JSON.stringify([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ingress } } }])}`,
      // Only Prometheus scrapes the renderers here (the default lets any namespace's pods in).
      '--set-json', `renderer.networkPolicy.metricsFrom=${JSON.stringify([{ namespaceSelector: {}, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }])}`,
      // The node's API server is reached on 16443 (its forwarder on the bridge address): what a user
      // whose API server listens elsewhere than 443 and 6443 must add too.
      '--set-json', 'operator.networkPolicy.kubernetesApiPorts=[443,6443,16443]',
    ]);
    expect(installed.status, installed.output).to.equal(0);
    const rendered = kubectl(['get', 'networkpolicies', '--namespace', namespace, '-o', 'jsonpath={.items[*].metadata.name}']);
    expect(rendered.stdout.split(' ').sort()).to.deep.equal([`${release}-viewfinder-api`, `${release}-viewfinder-operator`, `${release}-viewfinder-renderer`]);
    await allReady(namespace, release, 4);
    figures.push(`helm install to all 4 pods Ready with the agent enforcing: ${((performance.now() - started) / 1000).toFixed(1)} s`);

    await deployPages(other);
    apply([vantagePod('control', other), vantagePod('scraper', other, { 'app.kubernetes.io/name': 'prometheus' })]);
    apply([vantagePod('ingress-controller', ingress)]);
    for (const [where, name] of [[other, 'control'], [other, 'scraper'], [ingress, 'ingress-controller']] as const) {
      await until(`pod ${name} Ready`, () => pods(where, `app=${name}`).some(isReady), 120_000, () => describePods(where));
    }
    const endpoint = kubectl(['get', 'endpointslice', 'kubernetes', '--namespace', 'default', '-o', 'jsonpath={.endpoints[0].addresses[0]}:{.ports[0].port}']);
    targets = {
      web: hosts.NETPOL_WEB as string,
      metadata: hosts.NETPOL_METADATA as string,
      node: hosts.NETPOL_NODE as string,
      kubeApiService: `${clusterIP('default', 'kubernetes')}:443`,
      kubeApiEndpoint: endpoint.stdout,
      apiPod: address(onePod(namespace, 'app.kubernetes.io/component=api')),
      rendererPod: address(onePod(namespace, 'app.kubernetes.io/component=renderer')),
      operatorPod: address(onePod(namespace, 'app.kubernetes.io/component=operator')),
      otherPod: address(onePod(other, 'app=pages'), 8080),
      otherService: `${clusterIP(other, 'pages')}:80`,
      dns: 'kubernetes.default.svc.cluster.local',
    };
  });

  it('a pod under no policy reaches every target, so each "blocked" below is a policy at work', () => {
    const { apiPod: _a, rendererPod: _r, operatorPod: _o, ...open } = targets;
    const got = probe(onePod(other, 'app=control'), other, open);
    expect(outcomes(Object.fromEntries(Object.keys(open).map((name) => [name, 'open'])), got)).to.deep.equal(Object.fromEntries(Object.keys(open).map((name) => [name, 'open'])));
  });

  it('the renderer reaches the outside page and DNS, and nothing in the cluster, the node or cloud metadata', () => {
    const expected = {
      web: 'open', dns: 'open',
      metadata: 'blocked', node: 'blocked', kubeApiService: 'blocked', kubeApiEndpoint: 'blocked',
      apiPod: 'blocked', operatorPod: 'blocked', otherPod: 'blocked', otherService: 'blocked',
    } as const;
    const { rendererPod: _self, ...toProbe } = targets;
    expect(outcomes(expected, probe(onePod(namespace, 'app.kubernetes.io/component=renderer'), namespace, toProbe))).to.deep.equal(expected);
  });

  it("the operator reaches the API's pods, DNS and the Kubernetes API on its ports, and nothing else", () => {
    const expected = {
      apiPod: 'open', dns: 'open', kubeApiService: 'open', kubeApiEndpoint: 'open',
      web: 'blocked', metadata: 'blocked', node: 'blocked', rendererPod: 'blocked', otherPod: 'blocked', otherService: 'blocked',
    } as const;
    const { operatorPod: _self, ...toProbe } = targets;
    expect(outcomes(expected, probe(onePod(namespace, 'app.kubernetes.io/component=operator'), namespace, toProbe))).to.deep.equal(expected);
  });

  it('the API reaches the renderers and the Kubernetes API (it has no egress policy)', () => {
    const expected = { rendererPod: 'open', kubeApiService: 'open', kubeApiEndpoint: 'open' } as const;
    const { rendererPod, kubeApiService, kubeApiEndpoint } = targets as Record<string, string>;
    expect(outcomes(expected, probe(onePod(namespace, 'app.kubernetes.io/component=api'), namespace, { rendererPod, kubeApiService, kubeApiEndpoint } as Record<string, string>))).to.deep.equal(expected);
  });

  it('only the scrapers reach the renderer and operator ports; the API port admits the ingress controller and the scrapers, not any pod', () => {
    const ports = { apiPod: targets.apiPod, rendererPod: targets.rendererPod, operatorPod: targets.operatorPod } as Record<string, string>;
    expect(outcomes({ apiPod: 'open', rendererPod: 'open', operatorPod: 'open' }, probe(onePod(other, 'app=scraper'), other, ports))).to.deep.equal({ apiPod: 'open', rendererPod: 'open', operatorPod: 'open' });
    expect(outcomes({ apiPod: 'blocked', rendererPod: 'blocked', operatorPod: 'blocked' }, probe(onePod(other, 'app=control'), other, ports))).to.deep.equal({ apiPod: 'blocked', rendererPod: 'blocked', operatorPod: 'blocked' });
    expect(outcomes({ apiPod: 'open' }, probe(onePod(ingress, 'app=ingress-controller'), ingress, { apiPod: targets.apiPod as string }))).to.deep.equal({ apiPod: 'open' });
  });

  it('works with every policy enforced: the operator reconciles a Site and an ApiKey, and the key captures the outside page through the API Service', async () => {
    const created = kubectl(['exec', '--namespace', namespace, `deploy/${release}-viewfinder-api`, '--', 'node', 'bin/viewfinder.ts', 'accounts', 'create', account]);
    expect(created.status, created.output).to.equal(0);
    const accountId = (JSON.parse(created.stdout) as { account: { id: string } }).account.id;
    const webHost = (hosts.NETPOL_WEB as string).split(':')[0] as string;
    apply([
      { apiVersion: 'viewfinder.dev/v1alpha1', kind: 'Site', metadata: { name: 'outside', namespace }, spec: { account: accountId, allowedDomains: [webHost] } },
      { apiVersion: 'viewfinder.dev/v1alpha1', kind: 'ApiKey', metadata: { name: 'outside-key', namespace }, spec: { account: accountId, siteRef: 'outside', restrictDomains: true } },
    ], namespace);
    const waited = kubectl(['wait', '--namespace', namespace, '--for=condition=Ready', 'sites.viewfinder.dev/outside', 'apikeys.viewfinder.dev/outside-key', '--timeout=120s']);
    expect(waited.status, waited.output + describePods(namespace)).to.equal(0);
    const key = Buffer.from(kubectl(['get', 'secret', 'outside-key', '--namespace', namespace, '-o', 'jsonpath={.data.apiKey}']).stdout, 'base64').toString('utf8');
    const base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
    let answer: { status: number; body: any } = { status: 0, body: undefined };
    // Pods go Ready before kube-proxy programs a new Service's ClusterIP: a refused connection is retried.
    await until('the capture through the API Service', async () => {
      answer = await apiCall(base, key, 'POST', '/api/screenshot', { url: `http://${hosts.NETPOL_WEB}/` }).catch((err: Error) => ({ status: 0, body: err.message }));
      return answer.status !== 0;
    }, 60_000);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.image).to.match(/^data:image\/png;base64,/);
  });
});
