/**
 * `make bench-autoscale`: the chart with busy-slot autoscaling on a real node (test/cluster/node),
 * under a load ramp. Needs KUBECONFIG of a node: the Makefile target runs it through
 * test/cluster/with-test-servers.sh, which uses a KUBECONFIG already set or starts a node for the run.
 *
 * The add-ons (metrics-server, KEDA, Prometheus with Kubernetes discovery) are started and stopped
 * by test/cluster/addons/. The chart runs with its own autoscaling defaults on the small-node values
 * (charts/viewfinder/ci/self-hosted-values.yaml: 250m and 512Mi per renderer), 1 API.
 *
 * The ramp: 1 client, one more every RAMP_SECONDS / 7 up to 8, held HOLD_SECONDS, then 1 client
 * (captures go on while renderers are removed: the drain must hold) until the renderers are back at
 * the minimum, then none. Each capture waits WAIT_MS after load, as a page that waits on the network.
 * Printed: the time from the load's start to the autoscaler's decision, to a new renderer Ready and
 * to its first capture; 429s and failures per phase; p50 and p95 latency per phase; the scale-down
 * delay; `kubectl top` of the renderers under load against their requests.
 *
 * Env: RAMP_SECONDS (60), HOLD_SECONDS (240), WAIT_MS (2000), SCRAPE_INTERVAL (the chart's
 * ServiceMonitor interval), BENCH_SET (more --set for the chart, comma-separated),
 * KEEP_NAMESPACE=1 (leave the release for a look afterwards).
 */
import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import { startAddons, type Addons } from '../test/node/addons.ts';
import {
  CHART,
  CaptureLoad,
  IMAGE_ARGS,
  allReady,
  buildAndLoadImage,
  bytesOf,
  capturesServed,
  clusterIP,
  deployPages,
  helm,
  isReady,
  kubectl,
  pods,
  realNode,
  type CaptureOutcome,
} from '../test/node/cluster.ts';
import { fmt, percentile, sleep } from './stats.ts';

const RAMP_SECONDS = Number(process.env.RAMP_SECONDS ?? 60);
const HOLD_SECONDS = Number(process.env.HOLD_SECONDS ?? 240);
const WAIT_MS = Number(process.env.WAIT_MS ?? 2000);
const PEAK_CLIENTS = 8;

const node = realNode();
if ('skip' in node) {
  console.error(`bench-autoscale needs a node: ${node.skip}`);
  process.exit(2);
}

const namespace = `${process.env.VIEWFINDER_TEST_NAMESPACE_PREFIX ?? 'viewfinder-bench-'}${randomBytes(3).toString('hex')}-scale`;
const release = 'vf';
const deployment = `${release}-viewfinder-renderer`;
const rendererSelector = `app.kubernetes.io/instance=${release},app.kubernetes.io/component=renderer`;
const apiKey = randomBytes(24).toString('hex');
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const chartValues = parse(helm(['show', 'values', CHART]).stdout);
const scrapeInterval = process.env.SCRAPE_INTERVAL ?? chartValues.metrics.serviceMonitor.interval;

let addons: Addons | undefined;
try {
  const image = buildAndLoadImage(node.stateDir);
  log(`image built in ${fmt(image.buildSeconds, 0)} s, loaded in ${fmt(image.loadSeconds, 0)} s`);
  const created = kubectl(['create', 'namespace', namespace]);
  if (created.status !== 0) throw new Error(created.output);
  addons = startAddons({ namespace: `${namespace}-addons`, scrapeNamespaces: [namespace], scrapeInterval });
  log(`add-ons up in ${fmt(addons.startSeconds, 0)} s (Prometheus ${addons.prometheusUrl}, scrapes every ${scrapeInterval})`);
  kubectl(['create', 'secret', 'generic', 'viewfinder-api-key', '--namespace', namespace, `--from-literal=apiKey=${apiKey}`]);
  const page = await deployPages(namespace);
  const extra = (process.env.BENCH_SET ?? '').split(',').filter(Boolean).flatMap((value) => ['--set', value]);
  const installed = helm([
    'upgrade', '--install', release, CHART, '--namespace', namespace, '--wait=false', '--skip-crds',
    '-f', `${CHART}/ci/self-hosted-values.yaml`, ...IMAGE_ARGS,
    '--set', 'api.replicas=1',
    '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([page.ip])}`,
    '--set', 'renderer.autoscaling.enabled=true',
    '--set', 'renderer.autoscaling.signal=busySlots',
    '--set', `renderer.autoscaling.prometheusServerAddress=${addons.prometheusUrl}`,
    ...extra,
  ]);
  if (installed.status !== 0) throw new Error(installed.output);
  const rendered = JSON.parse(helm(['get', 'values', release, '--namespace', namespace, '--all', '-o', 'json']).stdout);
  const scaling = rendered.renderer.autoscaling;
  const minimum = scaling.minReplicas as number;
  await allReady(namespace, release, 1 + minimum, 600_000);
  const base = `http://${clusterIP(namespace, `${release}-viewfinder-api`)}`;
  await sleep(30_000); // the HPA and a first scrape settle at the minimum
  log(`installed: ${minimum} to ${scaling.maxReplicas} renderers, concurrency ${rendered.renderer.concurrency}, target ${scaling.targetBusySlotsPerPod || 0.75 * rendered.renderer.concurrency} busy slots a pod, KEDA polls every ${scaling.pollingIntervalSeconds} s, scale-down after ${scaling.scaleDown.stabilizationWindowSeconds} s, ${scaling.scaleDown.pods} pod per ${scaling.scaleDown.periodSeconds} s`);

  const renderers = () => pods(namespace, rendererSelector);
  const desired = () => Number(kubectl(['get', 'deployment', deployment, '--namespace', namespace, '-o', 'jsonpath={.spec.replicas}']).stdout);
  const first = new Set(renderers().map((pod) => pod.metadata.name));
  const events: Record<string, number> = {};
  const mark = (what: string, at = Date.now()) => {
    if (events[what] === undefined) {
      events[what] = at;
      log(`${what} (${fmt((at - start) / 1000)} s after the load's start)`);
    }
  };
  const top: Array<{ pod: string; cpuMilli: number; memoryMiB: number }> = [];
  let peakDesired = minimum;

  const load = new CaptureLoad(base, apiKey, page.url, { wait: WAIT_MS });
  const start = Date.now();
  load.setClients(1);
  let phase = 'ramp' as 'ramp' | 'hold' | 'down';
  const phases: Record<string, [number, number]> = { ramp: [start, start + RAMP_SECONDS * 1000] };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const now = Date.now();
      const wanted = desired();
      peakDesired = Math.max(peakDesired, wanted);
      if (wanted > minimum) mark('the autoscaler wants more renderers');
      const current = renderers();
      const added = current.filter((pod) => !first.has(pod.metadata.name));
      if (added.some(isReady)) mark('a new renderer Ready');
      for (const pod of added.filter(isReady)) if ((await capturesServed(pod)) > 0) mark('a new renderer served a capture', now);
      if (phase === 'hold' && now > phases.hold![1] - HOLD_SECONDS * 500) {
        // kubectl top during the second half of the hold: the renderers under load
        const listed = kubectl(['top', 'pods', '--namespace', namespace, '-l', rendererSelector, '--no-headers']);
        for (const line of listed.stdout.trim().split('\n').filter(Boolean)) {
          const [pod, cpu, memory] = line.split(/\s+/) as [string, string, string];
          top.push({ pod, cpuMilli: Number(cpu.replace(/m$/, '')), memoryMiB: bytesOf(memory) / 2 ** 20 });
        }
      }
      await sleep(1000);
    }
  })();

  for (let clients = 2; clients <= PEAK_CLIENTS; clients++) {
    await sleep((RAMP_SECONDS * 1000) / (PEAK_CLIENTS - 1));
    load.setClients(clients);
  }
  phase = 'hold';
  phases.hold = [Date.now(), Date.now() + HOLD_SECONDS * 1000];
  log(`holding ${PEAK_CLIENTS} clients for ${HOLD_SECONDS} s`);
  await sleep(HOLD_SECONDS * 1000);
  phase = 'down';
  const downAt = Date.now();
  phases.down = [downAt, Number.POSITIVE_INFINITY];
  load.setClients(1);
  log(`down to 1 client; waiting for ${minimum} renderers`);
  const deadline = downAt + 30 * 60_000;
  while (!(desired() === minimum && renderers().length === minimum)) {
    if (Date.now() > deadline) throw new Error('the renderers did not come back to the minimum in 30 minutes');
    if (desired() < peakDesired) mark('the autoscaler removes renderers');
    await sleep(1000);
  }
  mark('back to the minimum, every extra renderer gone');
  await sleep(5000);
  sampling = false;
  await sampler;
  const outcomes = await load.stop();
  phases.down![1] = Date.now();

  const inPhase = (name: string) => outcomes.filter((outcome: CaptureOutcome) => outcome.started >= phases[name]![0] && outcome.started < phases[name]![1]);
  const latencyOf = (list: CaptureOutcome[]) => list.filter((outcome) => outcome.status === 200).map((outcome) => outcome.ended - outcome.started);
  const row = (name: string, list: CaptureOutcome[]) => {
    const latencies = latencyOf(list);
    const other = list.filter((outcome) => outcome.status !== 200 && outcome.status !== 429);
    return `| ${name} | ${list.length} | ${list.filter((outcome) => outcome.status === 429).length} | ${other.length}${other.length ? ` (${[...new Set(other.map((outcome) => outcome.error))].join('; ')})` : ''} | ${fmt(percentile(latencies, 50) / 1000, 2)} s | ${fmt(percentile(latencies, 95) / 1000, 2)} s |`;
  };
  const hold = inPhase('hold');
  const steady = hold.filter((outcome) => outcome.started >= phases.hold![1] - 60_000);
  console.log('\n| phase | captures | 429 | failed | p50 | p95 |\n|---|---|---|---|---|---|');
  console.log(row(`ramp (1 to ${PEAK_CLIENTS} clients, ${RAMP_SECONDS} s)`, inPhase('ramp')));
  console.log(row(`hold (${PEAK_CLIENTS} clients, ${HOLD_SECONDS} s)`, hold));
  console.log(row(`steady state (the hold's last 60 s)`, steady));
  console.log(row('scale-down (1 client, until back at the minimum)', inPhase('down')));
  const since = (what: string, from = start) => (events[what] === undefined ? 'never' : `${fmt((events[what]! - from) / 1000)} s`);
  console.log(`\n- the autoscaler wants more renderers: ${since('the autoscaler wants more renderers')} after the load's start`);
  console.log(`- a new renderer Ready: ${since('a new renderer Ready')}; its first capture: ${since('a new renderer served a capture')}`);
  console.log(`- peak: ${peakDesired} renderers wanted`);
  console.log(`- scale-down: the first renderer removed ${since('the autoscaler removes renderers', downAt)} after the load fell; back at ${minimum} ${since('back to the minimum, every extra renderer gone', downAt)} after`);
  if (top.length) {
    const requests = rendered.renderer.resources.requests;
    const cpu = top.map((sample) => sample.cpuMilli);
    const memory = top.map((sample) => sample.memoryMiB);
    console.log(`- kubectl top, renderers in the hold's second half (${top.length} samples): CPU p50 ${fmt(percentile(cpu, 50), 0)}m, p95 ${fmt(percentile(cpu, 95), 0)}m, max ${Math.max(...cpu)}m (request ${requests.cpu}); memory p50 ${fmt(percentile(memory, 50), 0)} MiB, p95 ${fmt(percentile(memory, 95), 0)} MiB, max ${fmt(Math.max(...memory), 0)} MiB (request ${requests.memory})`);
  }
} finally {
  if (process.env.KEEP_NAMESPACE !== '1') {
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=300s']);
    addons?.stop();
  } else {
    log(`kept namespace ${namespace} and the add-ons (test/cluster/addons/down.sh stops them)`);
  }
}
