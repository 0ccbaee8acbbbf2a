/**
 * The real node's leg (test/node/*.test.ts): pods of the chart running in real containers on the
 * single-node cluster of test/cluster/node, which `make test` starts. Helpers shared by its files:
 * whether a node is there (and why not), the image built with `make image`'s script and loaded into
 * the node once per run, pods and their readiness, and clients that capture through a Service.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from '@kubernetes/client-node';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { noClusterReason, noNodeReason } from '../support/cluster.ts';
import { closedPort } from '../support/fixture-server.ts';
import { createS3Bucket, type S3BlobStoreOptions } from '../../lib/blobs/s3-blob-store.ts';
import { helm, kubectl } from '../support/k8s-tools.ts';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const CHART = `${REPO}charts/viewfinder`;
/** The project's own node scripts (test/cluster/node). */
export const LOAD_IMAGE = `${REPO}test/cluster/node/load-image.sh`;
/**
 * The image the leg builds and the chart runs (pullPolicy Never: the node has no registry).
 * VIEWFINDER_NODE_IMAGE_TAG gives a clone its own tag on a node that several clones share.
 */
export const IMAGE = { repository: 'viewfinder', tag: process.env.VIEWFINDER_NODE_IMAGE_TAG ?? 'node-ci' };
export const IMAGE_ARGS = ['--set', `image.repository=${IMAGE.repository}`, '--set', `image.tag=${IMAGE.tag}`, '--set', 'image.pullPolicy=Never'];

/**
 * The node's STATE_DIR (load-image.sh needs it): VIEWFINDER_NODE_STATE, else the folder of a
 * KUBECONFIG that up.sh wrote. Undefined, with the reason, when there is no Ready node to test on.
 */
/**
 * A real-node leg: its tests run where realNode() finds a Ready node, and otherwise one pending test
 * says why it did not (10 minutes per test: image builds, rollouts).
 */
export function describeOnRealNode(title: string, body: (this: Mocha.Suite, node: { stateDir: string }) => void): void {
  describe(title, function () {
    this.timeout(600_000);
    const node = realNode();
    if ('skip' in node) {
      it(`is skipped: ${node.skip}`, function () {
        this.skip();
      });
      return;
    }
    body.call(this, node);
  });
}

export function realNode(): { stateDir: string } | { skip: string } {
  const kubeconfig = process.env.KUBECONFIG;
  const noCluster = noClusterReason();
  if (noCluster || !kubeconfig) return { skip: noCluster ?? 'no KUBECONFIG' };
  const stateDir = process.env.VIEWFINDER_NODE_STATE ?? path.dirname(kubeconfig);
  if (!existsSync(path.join(stateDir, 'node'))) return { skip: noNodeReason(stateDir) };
  const nodes = kubectl(['get', 'nodes', '-o', 'json']);
  if (nodes.status !== 0) return { skip: `the cluster does not answer: ${nodes.output.trim()}` };
  const ready = (JSON.parse(nodes.stdout).items as Array<{ status: { conditions: Array<{ type: string; status: string }> } }>).some((node) =>
    node.status.conditions.some((condition) => condition.type === 'Ready' && condition.status === 'True'),
  );
  if (!ready) return { skip: 'the cluster has no Ready node' };
  return { stateDir };
}

let imageLoaded: { buildSeconds: number; loadSeconds: number } | undefined;

/**
 * Builds the image with tools/image/build.sh (what `make image` runs; cached after the first run) and
 * loads it into the node. The archive (about 1.6 GB) is written to a temporary folder and deleted
 * once the node has it, so that no run leaves it behind.
 */
export function buildAndLoadImage(stateDir: string): { buildSeconds: number; loadSeconds: number } {
  if (imageLoaded) return imageLoaded;
  const folder = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-image-'));
  try {
    imageLoaded = buildAndLoadThrough(path.join(folder, `viewfinder-${IMAGE.tag}.tar`), stateDir);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  return imageLoaded;
}

function buildAndLoadThrough(archive: string, stateDir: string): { buildSeconds: number; loadSeconds: number } {
  let started = performance.now();
  const built = spawnSync('bash', [`${REPO}tools/image/build.sh`], {
    env: { ...process.env, IMAGE: `${IMAGE.repository}:${IMAGE.tag}`, IMAGE_ARCHIVE: archive },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (built.status !== 0) throw new Error(`tools/image/build.sh failed (${built.status}):\n${(built.stdout + built.stderr).slice(-4000)}`);
  const buildSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const loaded = spawnSync(LOAD_IMAGE, [stateDir, archive], { encoding: 'utf8' });
  if (loaded.status !== 0) throw new Error(`load-image.sh failed:\n${loaded.stdout}${loaded.stderr}`);
  if (!loaded.stdout.includes(`${IMAGE.repository}:${IMAGE.tag}`)) throw new Error(`the node does not list ${IMAGE.repository}:${IMAGE.tag}:\n${loaded.stdout}`);
  return { buildSeconds, loadSeconds: (performance.now() - started) / 1000 };
}

export interface Pod {
  metadata: { name: string; labels: Record<string, string>; deletionTimestamp?: string };
  status: { podIP?: string; phase: string; conditions?: Array<{ type: string; status: string }>; containerStatuses?: Array<{ restartCount: number; state: Record<string, unknown> }> };
  spec: { containers: Array<{ ports?: Array<{ containerPort: number; name?: string }>; resources?: { requests?: Record<string, string> } }> };
}

export function pods(namespace: string, selector = ''): Pod[] {
  const listed = kubectl(['get', 'pods', '--namespace', namespace, '-o', 'json', ...(selector ? ['-l', selector] : [])]);
  if (listed.status !== 0) throw new Error(listed.output);
  return JSON.parse(listed.stdout).items as Pod[];
}

export const isReady = (pod: Pod) => !pod.metadata.deletionTimestamp && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Polls until `check` is true; fails with `what` and the last `describe()` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** What a namespace's pods look like, for failure messages. */
export function describePods(namespace: string): string {
  return kubectl(['get', 'pods', '--namespace', namespace, '-o', 'wide']).output + kubectl(['get', 'events', '--namespace', namespace, '--sort-by=.lastTimestamp']).output.split('\n').slice(-25).join('\n');
}

/** Every pod of the release Ready, and as many as the Deployments want (none left over from a rollout). */
export async function allReady(namespace: string, release: string, expected: number, timeoutMs = 240_000): Promise<void> {
  await until(
    `${expected} Ready pods of ${release}`,
    () => {
      const current = pods(namespace, `app.kubernetes.io/instance=${release}`);
      return current.length === expected && current.every(isReady);
    },
    timeoutMs,
    () => describePods(namespace),
  );
}

export function clusterIP(namespace: string, service: string): string {
  const got = kubectl(['get', 'service', service, '--namespace', namespace, '-o', 'jsonpath={.spec.clusterIP}']);
  if (got.status !== 0 || !got.stdout) throw new Error(got.output);
  return got.stdout;
}

/** A page served inside the cluster: the node's busybox answers "hello from <pod>" on 8080, behind Service `pages` on port 80. */
/** What Pod Security "restricted" asks of a pod and its containers (the test cluster enforces it). */
export const RESTRICTED_POD = { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: { type: 'RuntimeDefault' } };
export const RESTRICTED_CONTAINER = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

export async function deployPages(namespace: string): Promise<{ url: string; ip: string }> {
  const manifest = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'pages', namespace },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'pages' } },
          template: {
            metadata: { labels: { app: 'pages' } },
            spec: {
              securityContext: RESTRICTED_POD,
              containers: [
                {
                  name: 'httpd',
                  image: 'localhost/k8s-local/busybox:1',
                  imagePullPolicy: 'Never',
                  securityContext: RESTRICTED_CONTAINER,
                  ports: [{ containerPort: 8080 }],
                  // Ready fast, then hard to knock out: the pages are the tests' fixture, not under test, and a
                  // probe timing out on a loaded machine must not take them out of their Service (whose
                  // ClusterIP then refuses connections: a capture of them fails with ERR_CONNECTION_REFUSED).
                  readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 30 },
                },
              ],
            },
          },
        },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'pages', namespace }, spec: { selector: { app: 'pages' }, ports: [{ port: 80, targetPort: 8080 }] } },
    ],
  };
  const applied = kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
  if (applied.status !== 0) throw new Error(applied.output);
  await until('the pages pod to be Ready', () => pods(namespace, 'app=pages').some(isReady), 120_000, () => describePods(namespace));
  return { url: `http://pages.${namespace}.svc.cluster.local/`, ip: clusterIP(namespace, 'pages') };
}

/** A small renderer tier for the 2-CPU node: one pod, autoscaling off, a quarter CPU requested. */
export const ONE_SMALL_RENDERER = [
  '--set', 'renderer.autoscaling.enabled=false',
  '--set', 'renderer.replicas=1',
  '--set', 'renderer.resources.requests.cpu=250m',
  '--set', 'renderer.resources.requests.memory=512Mi',
];

/** A hosted account made with the CLI in an API pod, as docs/install-kubernetes.md does; its first full-access key. */
export function createAccount(namespace: string, release: string, name: string, cliArgs: string[] = []): { id: string; key: string } {
  const created = kubectl(['exec', '--namespace', namespace, `deploy/${release}-viewfinder-api`, '--', 'node', 'bin/viewfinder.ts', 'accounts', 'create', name, ...cliArgs]);
  if (created.status !== 0) throw new Error(created.output);
  const printed = JSON.parse(created.stdout) as { account: { id: string }; key: { key: string } };
  return { id: printed.account.id, key: printed.key.key };
}

/** An API call with a key (X-API-Key, in either mode): its status and JSON body (or text). */
export async function apiCall(base: string, key: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(90_000),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the assertion's message.
  }
  return { status: response.status, body: parsed };
}

/** http://POD_IP:PORT of a pod's first container port: the host reaches pod IPs directly on the node. */
export function podBase(pod: Pod): string {
  if (!pod.status.podIP) throw new Error(`${pod.metadata.name} has no IP`);
  return `http://${pod.status.podIP}:${pod.spec.containers[0]?.ports?.[0]?.containerPort ?? 3000}`;
}

/** The node's bridge address: pods reach the host there, and no outside network does. */
export const NODE_BRIDGE = '10.244.0.1';

/**
 * FerretDB (test/cluster/ferretdb.sh) on the node's bridge address, as a MongoDB outside the cluster
 * that the chart's pods reach through mongodb.external. Its own STATE_DIR, wiped by stop().
 * halt() stops the server and keeps its data; resume() starts it again on the same port (the
 * MongoDB server going away and coming back, as test/node/faults.test.ts needs).
 */
export function startFerretDBOnBridge(): { uri: string; stop: () => void; halt: () => void; resume: () => void } {
  const script = `${REPO}test/cluster/ferretdb.sh`;
  const state = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-ferretdb-node-'));
  const up = (port?: string) => {
    const started = spawnSync(script, ['up', state], { env: { ...process.env, FERRETDB_LISTEN_HOST: NODE_BRIDGE, ...(port ? { FERRETDB_PORT: port } : {}) }, encoding: 'utf8' });
    const last = started.stdout.trim().split('\n').at(-1) ?? '';
    if (started.status !== 0 || !last.startsWith('MONGODB_URI=')) {
      spawnSync(script, ['down', state, ...(port ? [] : ['--wipe'])]);
      throw new Error(`ferretdb.sh up on ${NODE_BRIDGE}${port ? `:${port}` : ''} failed (${started.status}):\n${started.stdout}${started.stderr}`);
    }
    return last.slice('MONGODB_URI='.length);
  };
  const uri = up();
  const port = new URL(uri).port;
  return {
    uri,
    stop: () => void spawnSync(script, ['down', state, '--wipe']),
    halt: () => {
      const down = spawnSync(script, ['down', state], { encoding: 'utf8' });
      if (down.status !== 0) throw new Error(`ferretdb.sh down failed (${down.status}):\n${down.stdout}${down.stderr}`);
    },
    resume: () => void up(port),
  };
}

/**
 * An S3-compatible object store (versitygw, test/cluster/versitygw.sh) on the node's bridge address,
 * where the chart's API pods keep their blobs (api.blobStore.kind=s3) and the test reads them back
 * from the host; with one bucket made. Its own STATE_DIR, wiped by stop().
 */
export async function startObjectStoreOnBridge(bucket: string): Promise<{ options: S3BlobStoreOptions; stop: () => void }> {
  const script = `${REPO}test/cluster/versitygw.sh`;
  const state = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-versitygw-node-'));
  const stop = () => void spawnSync(script, ['down', state, '--wipe']);
  const up = spawnSync(script, ['up', state], { env: { ...process.env, VERSITYGW_LISTEN_HOST: NODE_BRIDGE }, encoding: 'utf8' });
  const values = Object.fromEntries(up.stdout.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2)));
  if (up.status !== 0 || !values.S3_ENDPOINT) {
    stop();
    throw new Error(`versitygw.sh up on ${NODE_BRIDGE} failed (${up.status}):\n${up.stdout}${up.stderr}`);
  }
  const options: S3BlobStoreOptions = {
    endpoint: new URL(values.S3_ENDPOINT),
    bucket,
    region: values.S3_REGION,
    pathStyle: true,
    credentials: { accessKeyId: values.S3_ACCESS_KEY_ID, secretAccessKey: values.S3_SECRET_ACCESS_KEY },
  };
  await createS3Bucket(options);
  return { options, stop };
}

/**
 * Jaeger (test/cluster/jaeger.sh) on the node's bridge address, where the chart's pods send their
 * spans (tracing.otlpEndpoint) and the test reads them back. Its own STATE_DIR, wiped by stop().
 */
export function startJaegerOnBridge(): { otlpEndpoint: string; otlpPort: number; query: string; stop: () => void } {
  const script = `${REPO}test/cluster/jaeger.sh`;
  const state = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-jaeger-node-'));
  const up = spawnSync(script, ['up', state], { env: { ...process.env, JAEGER_LISTEN_HOST: NODE_BRIDGE }, encoding: 'utf8' });
  const lines = up.stdout.trim().split('\n');
  const otlp = lines.find((line) => line.startsWith('VIEWFINDER_TEST_OTLP_ENDPOINT='))?.split('=')[1];
  const query = lines.find((line) => line.startsWith('VIEWFINDER_TEST_JAEGER_QUERY='))?.split('=')[1];
  if (up.status !== 0 || !otlp || !query) {
    spawnSync(script, ['down', state, '--wipe']);
    throw new Error(`jaeger.sh up on ${NODE_BRIDGE} failed (${up.status}):\n${up.stdout}${up.stderr}`);
  }
  return { otlpEndpoint: otlp, otlpPort: Number(new URL(otlp).port), query, stop: () => void spawnSync(script, ['down', state, '--wipe']) };
}

/** A Secret of string data in a namespace (kubectl create secret generic). */
export function createSecret(namespace: string, name: string, data: Record<string, string>): void {
  const created = kubectl(['create', 'secret', 'generic', name, '--namespace', namespace, ...Object.entries(data).map(([key, value]) => `--from-literal=${key}=${value}`)]);
  if (created.status !== 0) throw new Error(created.output);
}

export interface CaptureOutcome {
  started: number;
  ended: number;
  status: number;
  error?: string;
  bytes?: Buffer;
}

/**
 * One capture through the API, timed; a refused or reset connection is an outcome too (status 0).
 * `options` are more fields of the request (a `wait`, to hold a slot as a slow page does).
 */
export async function capture(base: string, apiKey: string, url: string, options: Record<string, unknown> = {}): Promise<CaptureOutcome> {
  const started = Date.now();
  try {
    const response = await fetch(`${base}/screenshot`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ ...options, url }),
      signal: AbortSignal.timeout(90_000),
    });
    const body = Buffer.from(await response.arrayBuffer());
    const outcome: CaptureOutcome = { started, ended: Date.now(), status: response.status, bytes: body };
    if (response.status !== 200) outcome.error = `${response.status} ${response.headers.get('retry-after') ? `(Retry-After ${response.headers.get('retry-after')}) ` : ''}${body.toString('utf8').slice(0, 200)}`;
    return outcome;
  } catch (err) {
    return { started, ended: Date.now(), status: 0, error: String((err as Error).cause ?? err) };
  }
}

/** `clients` loops of captures until `stop()` resolves; every outcome, in order of ending. */
export async function captureWhile(clients: number, base: string, apiKey: string, url: string, stop: () => Promise<void>): Promise<CaptureOutcome[]> {
  const outcomes: CaptureOutcome[] = [];
  let stopping = false;
  const loops = Array.from({ length: clients }, async () => {
    while (!stopping) outcomes.push(await capture(base, apiKey, url));
  });
  try {
    await stop();
  } finally {
    stopping = true;
    await Promise.all(loops);
  }
  return outcomes;
}

/**
 * Clients that capture in loops, as many as setClients() last said: a client that is no longer
 * wanted stops after its capture in flight. Every outcome, in order of ending.
 */
export class CaptureLoad {
  readonly outcomes: CaptureOutcome[] = [];
  private wanted = 0;
  /** Client i runs while i < wanted; its loop, while it runs. */
  private readonly running = new Map<number, Promise<void>>();

  private readonly base: string;
  private readonly apiKey: string;
  private readonly url: string;
  private readonly options: Record<string, unknown>;

  constructor(base: string, apiKey: string, url: string, options: Record<string, unknown> = {}) {
    this.base = base;
    this.apiKey = apiKey;
    this.url = url;
    this.options = options;
  }

  get clients(): number {
    return this.wanted;
  }

  setClients(count: number): void {
    this.wanted = count;
    for (let client = 0; client < count; client++) {
      if (this.running.has(client)) continue;
      this.running.set(
        client,
        (async () => {
          while (client < this.wanted) this.outcomes.push(await capture(this.base, this.apiKey, this.url, this.options));
          this.running.delete(client);
        })(),
      );
    }
  }

  /** No more clients; resolves once the captures in flight have ended. */
  async stop(): Promise<CaptureOutcome[]> {
    this.wanted = 0;
    await Promise.all([...this.running.values()]);
    return this.outcomes;
  }
}

/** The sum of a counter's samples in a Prometheus text exposition. */
export function counterSum(exposition: string, name: string): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export { bytesOf } from '../charts/chart.ts';
/** The captures a renderer pod has rendered successfully, from its /metrics (0 while it does not answer). */
export async function capturesServed(pod: Pod): Promise<number> {
  const port = pod.spec.containers[0]?.ports?.[0]?.containerPort;
  const response = await fetch(`http://${pod.status.podIP}:${port}/metrics`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  if (!response?.ok) return 0;
  const successes = (await response.text()).split('\n').filter((line) => line.includes('outcome="success"'));
  return counterSum(successes.join('\n'), 'viewfinder_capture_duration_seconds_count');
}

/** Prometheus' label name for a Kubernetes label, as kubernetes_sd_configs spells it. */
const metaName = (label: string) => label.replace(/[^a-zA-Z0-9_]/g, '_');

/**
 * Kubernetes service discovery for a Prometheus built without it (Debian's): an http_sd_configs
 * endpoint that lists the ready endpoints of every Service in `namespaces` from their
 * EndpointSlices, labelled as kubernetes_sd_configs' `endpoints` role labels them.
 */
export async function startEndpointsSd(namespaces: string[]): Promise<{ url: string; close: () => Promise<void> }> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
  const targetGroups = async () => {
    const groups: Array<{ targets: string[]; labels: Record<string, string> }> = [];
    for (const namespace of namespaces) {
      const services = new Map((await core.listNamespacedService({ namespace })).items.map((service) => [service.metadata?.name, service]));
      for (const slice of (await discovery.listNamespacedEndpointSlice({ namespace })).items) {
        const service = services.get(slice.metadata?.labels?.['kubernetes.io/service-name']);
        if (!service) continue;
        const serviceLabels = Object.fromEntries(Object.entries(service.metadata?.labels ?? {}).map(([label, value]) => [`__meta_kubernetes_service_label_${metaName(label)}`, value]));
        for (const endpoint of slice.endpoints ?? []) {
          for (const port of slice.ports ?? []) {
            groups.push({
              targets: endpoint.addresses.map((address) => `${address}:${port.port}`),
              labels: {
                __meta_kubernetes_namespace: namespace,
                __meta_kubernetes_service_name: service.metadata?.name ?? '',
                ...serviceLabels,
                __meta_kubernetes_endpoint_port_name: port.name ?? '',
                __meta_kubernetes_endpoint_ready: String(endpoint.conditions?.ready ?? false),
                __meta_kubernetes_pod_name: endpoint.targetRef?.kind === 'Pod' ? (endpoint.targetRef.name ?? '') : '',
              },
            });
          }
        }
      }
    }
    return groups;
  };
  const server = http.createServer((_req, res) => {
    targetGroups().then(
      (groups) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(groups)),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    // Prometheus keeps its connection alive between refreshes: close it too, or close() waits for ever.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A Prometheus on the host, scraping a release as the chart's ServiceMonitor says, with the chart's rules. */
export interface ChartPrometheus {
  url: string;
  /** The PrometheusRule's spec the chart rendered (its groups). */
  rules: { groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string }> }> };
  /** An instant query's samples. */
  query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  /** The alerts pending or firing now. */
  alerts(): Promise<Array<{ labels: Record<string, string>; state: 'pending' | 'firing' }>>;
  /** What Prometheus printed, for a failure's message. */
  output(): string;
  close(): Promise<void>;
}

/**
 * Debian's Prometheus (2.42, built without kubernetes_sd_configs: "field not found") scraping the
 * release's pods: the EndpointSlices reach it through http_sd_configs (startEndpointsSd), with the
 * meta labels of kubernetes_sd's endpoints role, and the chart's ServiceMonitor (its selectors, port,
 * path and honorLabels) becomes its scrape config; the chart's PrometheusRule is its rule file.
 * Scrapes and evaluates every `interval` (the chart's default is 30 s).
 */
export async function startChartPrometheus(release: string, namespace: string, valueArgs: string[], interval = '2s'): Promise<ChartPrometheus> {
  const rendered = helm(['template', release, CHART, '--namespace', namespace, ...valueArgs, '--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.prometheusRule.enabled=true']);
  if (rendered.status !== 0) throw new Error(rendered.output);
  const objects = parseAllDocuments(rendered.stdout).map((document) => document.toJS()).filter(Boolean);
  const monitor = objects.find((object) => object.kind === 'ServiceMonitor');
  const rule = objects.find((object) => object.kind === 'PrometheusRule');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-node-prometheus-'));
  const sd = await startEndpointsSd(monitor.spec.namespaceSelector.matchNames);
  writeFileSync(path.join(dir, 'rules.yml'), JSON.stringify(rule.spec));
  const keepLabels = Object.entries(monitor.spec.selector.matchLabels as Record<string, string>).map(([label, value]) => ({
    source_labels: [`__meta_kubernetes_service_label_${metaName(label)}`],
    regex: value,
    action: 'keep',
  }));
  const endpoint = monitor.spec.endpoints[0];
  const config = {
    global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
    rule_files: [path.join(dir, 'rules.yml')],
    scrape_configs: [
      {
        job_name: 'viewfinder',
        metrics_path: endpoint.path,
        honor_labels: endpoint.honorLabels === true,
        http_sd_configs: [{ url: sd.url, refresh_interval: interval }],
        relabel_configs: [
          ...keepLabels,
          { source_labels: ['__meta_kubernetes_endpoint_port_name'], regex: endpoint.port, action: 'keep' },
          { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
          { source_labels: ['__meta_kubernetes_service_name'], target_label: 'job' },
        ],
      },
    ],
  };
  writeFileSync(path.join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const port = await closedPort();
  let output = '';
  const prometheus = spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  prometheus.stdout?.on('data', (chunk) => (output += chunk));
  prometheus.stderr?.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const get = async <T>(route: string): Promise<T | undefined> => {
    const response = await fetch(`${url}${route}`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
    return response?.ok ? (((await response.json()) as { data: T }).data) : undefined;
  };
  return {
    url,
    rules: rule.spec,
    query: async (expr) => (await get<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(`/api/v1/query?query=${encodeURIComponent(expr)}`))?.result ?? [],
    alerts: async () => (await get<{ alerts: Array<{ labels: Record<string, string>; state: 'pending' | 'firing' }> }>('/api/v1/alerts'))?.alerts ?? [],
    output: () => output,
    async close() {
      prometheus.kill('SIGTERM');
      if (prometheus.exitCode === null) await new Promise((resolve) => prometheus.once('exit', resolve));
      await sd.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { helm, kubectl };
