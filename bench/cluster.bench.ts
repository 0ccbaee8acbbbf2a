/**
 * The render tier as a cluster, on this machine (make bench-cluster): two API processes and three
 * renderer processes (RENDER_CONCURRENCY=1, real Chromium), all on loopback. The API processes find
 * the renderers as they would in Kubernetes, through EndpointSlices, here served by the in-process
 * fake API server; adding a renderer is publishing its slice, stopping one marks it terminating.
 * The fixture page waits a second on the network, so CPU is not what limits a renderer.
 *
 * Prints, against the issue's goals: each renderer's share of the captures; throughput against
 * three times one renderer alone; how long a fourth renderer takes to get its share; client-visible
 * failures when a renderer gets SIGTERM and when one gets SIGKILL mid-run; and captures allowed in a
 * minute for one key across two API processes on one store. Asserts nothing.
 * Run: node bench/cluster.bench.ts   (BENCH_PHASE_SECONDS, default 20)
 */
import { DiscoveryV1Api, type V1EndpointSlice } from '@kubernetes/client-node';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../lib/store/sqlite.ts';
import { killProcessGroupOf } from '../services/renderer/src/process-group.ts';
import { processTree } from '../services/renderer/src/process-memory.ts';
import { startFakeKubeApiServer } from '../test/support/fake-kube-apiserver.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../test/support/processes.ts';
import { startStubRenderer } from '../test/support/stub-renderer.ts';
import { fmt } from './stats.ts';

const PHASE_S = Number(process.env.BENCH_PHASE_SECONDS ?? 20);
const NAMESPACE = 'bench';
const SERVICE = 'viewfinder-renderer';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const table: Array<[string, string, string, string]> = [];
const row = (what: string, measured: string, goal: string, met: boolean | undefined) => {
  table.push([what, measured, goal, met === undefined ? '' : met ? 'met' : 'MISSED']);
  console.log(`  ${what}: ${measured} (goal: ${goal})`);
};

const fixtures = await startFixtureServer();
const fake = await startFakeKubeApiServer();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-bench-cluster-'));
const kubeconfig = path.join(tmp, 'kubeconfig');
writeFileSync(kubeconfig, fake.kubeconfigYaml);
const slices = fake.kubeConfig().makeApiClient(DiscoveryV1Api);
const processes: ServiceProcess[] = [];

/** Publishes (or updates) renderer `index`'s EndpointSlice, as the EndpointSlice controller would. */
async function publish(index: number, renderer: ServiceProcess, state: 'ready' | 'terminating' | 'gone') {
  const name = `${SERVICE}-${index}`;
  const body: V1EndpointSlice = {
    metadata: { name, labels: { 'kubernetes.io/service-name': SERVICE } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: renderer.port, protocol: 'TCP' }],
    endpoints: [{ addresses: ['127.0.0.1'], conditions: state === 'ready' ? { ready: true } : { ready: false, terminating: true } }],
  };
  const existing = await slices.readNamespacedEndpointSlice({ namespace: NAMESPACE, name }).catch(() => undefined);
  if (state === 'gone') {
    if (existing) await slices.deleteNamespacedEndpointSlice({ namespace: NAMESPACE, name });
    return;
  }
  if (!existing) await slices.createNamespacedEndpointSlice({ namespace: NAMESPACE, body });
  else await slices.replaceNamespacedEndpointSlice({ namespace: NAMESPACE, name, body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } } });
}

/** Captures the renderer has finished, from its own /metrics. */
async function completedBy(renderer: ServiceProcess): Promise<number> {
  const text = await fetch(`${renderer.base}/metrics`).then((r) => r.text(), () => '');
  let total = 0;
  for (const line of text.split('\n')) if (line.startsWith('viewfinder_capture_duration_seconds_count')) total += Number(line.split(' ').pop());
  return total;
}

async function status(renderer: ServiceProcess): Promise<{ inFlight: number; queued: number } | undefined> {
  return fetch(`${renderer.base}/v1/status`).then((r) => r.json() as Promise<{ inFlight: number; queued: number }>, () => undefined);
}

/** Closed-loop clients over the API processes; records every answer with the time it was sent. */
function traffic(apis: ServiceProcess[], clients: number) {
  const results: Array<{ sentAt: number; status: number; error?: string }> = [];
  let stopping = false;
  let next = 0;
  const loop = async () => {
    while (!stopping) {
      const api = apis[next++ % apis.length] as ServiceProcess;
      const sentAt = performance.now();
      try {
        const response = await fetch(`${api.base}/screenshot`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: fixtures.url('/slow?delay=1000'), wait: 1000, removeAds: false }),
        });
        const body = (await response.json()) as { error?: string };
        results.push({ sentAt, status: response.status, ...(response.status === 200 ? {} : { error: body.error }) });
      } catch (err) {
        results.push({ sentAt, status: 0, error: String(err) });
      }
    }
  };
  const loops = Array.from({ length: clients }, loop);
  return {
    results,
    failures: (since = 0) => results.filter((r) => r.status !== 200 && r.sentAt >= since),
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

try {
  console.log(`Cluster bench: 2 API processes, renderers with RENDER_CONCURRENCY=1, a page that waits 1 s on the network, phases of ${PHASE_S} s`);
  console.log(`Machine: ${os.availableParallelism()} cores, load average ${os.loadavg().map((n) => fmt(n)).join(' ')} (other work on it counts against these figures)`);
  const renderers: ServiceProcess[] = [];
  // One after another: four Chromiums starting at once on a loaded machine time out.
  for (let i = 0; i < 4; i++) renderers.push(await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '1', RENDER_QUEUE_LIMIT: '8', SHUTDOWN_TIMEOUT_MS: '60000' }, { startTimeoutMs: 180_000 }));
  processes.push(...renderers);
  const [r1, r2, r3, r4] = renderers as [ServiceProcess, ServiceProcess, ServiceProcess, ServiceProcess];
  await publish(1, r1, 'ready');
  const apiEnv = { KUBECONFIG: kubeconfig, RENDERER_SERVICE: SERVICE, POD_NAMESPACE: NAMESPACE, RENDERER_PROBE_INTERVAL_MS: '500' };
  const apis = await Promise.all([startServiceProcess(API_MAIN, apiEnv, { startTimeoutMs: 120_000 }), startServiceProcess(API_MAIN, apiEnv, { startTimeoutMs: 120_000 })]);
  processes.push(...apis);

  // 1. One renderer alone, kept busy (one capture running, two waiting).
  let load = traffic(apis, 3);
  let before = await completedBy(r1);
  await sleep(PHASE_S * 1000);
  await load.stop();
  const alone = ((await completedBy(r1)) - before) / PHASE_S;
  console.log(`  one renderer alone: ${fmt(alone, 2)} captures/s, ${load.failures().length} failures`);

  // 2. Three renderers, three times the clients.
  await publish(2, r2, 'ready');
  await publish(3, r3, 'ready');
  await sleep(1500);
  const three = [r1, r2, r3];
  const start3 = await Promise.all(three.map(completedBy));
  load = traffic(apis, 9);
  // How often each renderer's slot was busy: if always, the shortfall is the renderers' own speed, not dispatch.
  const phaseEnd = performance.now() + PHASE_S * 1000;
  let polls = 0;
  const busySlot = [0, 0, 0];
  while (performance.now() < phaseEnd) {
    const states = await Promise.all(three.map(status));
    polls += 1;
    states.forEach((s, i) => (busySlot[i] = (busySlot[i] as number) + (s && s.inFlight >= 1 ? 1 : 0)));
    await sleep(250);
  }
  await load.stop();
  console.log(`  slots busy during the 3-renderer phase: ${busySlot.map((n) => `${fmt((n / polls) * 100)}%`).join(' / ')} of ${polls} samples`);
  const done3 = (await Promise.all(three.map(completedBy))).map((n, i) => n - (start3[i] as number));
  const total3 = done3.reduce((a, b) => a + b, 0);
  const shares = done3.map((n) => n / total3);
  const worstShare = Math.max(...shares.map((s) => Math.abs(s - 1 / 3) * 3));
  row('share of captures per renderer', shares.map((s) => `${fmt(s * 100)}%`).join(' / '), 'each within ±15% of 33.3%', worstShare <= 0.15);
  const ratio = total3 / PHASE_S / (3 * alone);
  row('throughput, 3 renderers vs 3 × one alone', `${fmt(total3 / PHASE_S, 2)}/s vs ${fmt(3 * alone, 2)}/s = ${fmt(ratio, 2)}`, '≥ 0.85', ratio >= 0.85);
  if (load.failures().length) console.log(`  (failures in this phase: ${load.failures().length}: ${load.failures()[0]?.error})`);

  // 3. A fourth renderer added under steady load: how long until it holds its share of the work.
  load = traffic(apis, 12);
  await sleep(3000);
  const added = performance.now();
  await publish(4, r4, 'ready');
  // Its share of the running work is its one slot busy; of all the work, as many busy slots (running + queued) as the others.
  let slotBusyMs: number | undefined;
  let evenMs: number | undefined;
  while (performance.now() - added < 30_000 && evenMs === undefined) {
    const states = await Promise.all(renderers.map(status));
    const busy = states.map((s) => (s ? s.inFlight + s.queued : 0));
    const total = busy.reduce((a, b) => a + b, 0);
    if (slotBusyMs === undefined && (states[3]?.inFlight ?? 0) >= 1) slotBusyMs = performance.now() - added;
    if ((busy[3] as number) >= 1 && (busy[3] as number) >= Math.floor(total / 4)) evenMs = performance.now() - added;
    else await sleep(100);
  }
  const reachedMs = slotBusyMs;
  const start4 = await Promise.all(renderers.map(completedBy));
  await sleep(PHASE_S * 500);
  const done4 = (await Promise.all(renderers.map(completedBy))).map((n, i) => n - (start4[i] as number));
  const share4 = (done4[3] as number) / done4.reduce((a, b) => a + b, 0);
  const seconds = (ms: number | undefined) => (ms === undefined ? 'not within 30 s' : `${fmt(ms / 1000, 2)} s`);
  row(
    'a 4th renderer added mid-run reaches its share',
    `slot busy after ${seconds(reachedMs)}; an even share of busy slots (queue included) after ${seconds(evenMs)}; then ${fmt(share4 * 100)}% of captures (even: 25%)`,
    '< 5 s',
    reachedMs !== undefined && reachedMs < 5000,
  );

  // 4. SIGTERM one renderer mid-run (Kubernetes marks its endpoint terminating as it signals it).
  const termAt = performance.now();
  const termExit = once(r2.child, 'exit');
  await publish(2, r2, 'terminating');
  r2.child.kill('SIGTERM');
  const [termCode] = await termExit;
  const drainedS = (performance.now() - termAt) / 1000;
  await sleep(PHASE_S * 250);
  const sinceTerm = load.failures(termAt);
  if (termCode !== 0) console.log(`  (the SIGTERMed renderer exited ${termCode} after ${fmt(drainedS)} s; its last lines:)\n${r2.output().trim().split('\n').slice(-4).join('\n')}`);
  row('client-visible failures, SIGTERM mid-run', `${sinceTerm.length} (the renderer drained in ${fmt(drainedS)} s and exited ${termCode})`, '0', sinceTerm.length === 0);
  await publish(2, r2, 'gone');

  // 5. SIGKILL another renderer mid-run; its slice goes only when "Kubernetes" notices, 2 s later.
  const inFlightAtKill = (await status(r3))?.inFlight ?? 0;
  const killAt = performance.now();
  const killExit = once(r3.child, 'exit');
  // On Kubernetes the container's Chromium dies with it; here it would be orphaned and keep using
  // the cores that the rest of the bench measures, so it goes too.
  const chromium = (processTree(r3.child.pid!) ?? []).filter((pid) => pid !== r3.child.pid);
  r3.child.kill('SIGKILL');
  for (const pid of chromium) killProcessGroupOf(pid);
  await killExit;
  await sleep(2000);
  await publish(3, r3, 'gone');
  await sleep(PHASE_S * 250);
  await load.stop();
  const killFailures = load.failures(killAt - 60_000).filter((f) => f.sentAt >= killAt - 60_000 && !sinceTerm.includes(f));
  const afterKill = killFailures.filter((f) => f.sentAt > killAt + 100);
  row(
    'client-visible failures, SIGKILL mid-run',
    `${killFailures.length} (${inFlightAtKill} in flight on it, retried elsewhere; ${afterKill.length} among captures sent after)`,
    `only those in flight (${inFlightAtKill}); none after`,
    killFailures.length <= inFlightAtKill && afterKill.length === 0,
  );
  const served = load.results.filter((r) => r.status === 200).length;
  console.log(`  (phases 3–5: ${served} captures served, ${load.results.length - served} failed)`);

  // 6. One key's limit across two API processes on one store (MODE=hosted, embedded store).
  const limit = 60;
  const dataDir = path.join(tmp, 'data');
  const store = openSqliteStore({ dataDir });
  const account = await store.createAccount({ name: 'bench', rateLimitPerMinute: limit });
  const site = await store.createSite({ accountId: account.id, name: 'bench', allowedDomains: [] });
  const { secret } = await store.createKey({ accountId: account.id, name: 'bench', kind: 'site', siteId: site.id });
  await store.close();
  const stub = await startStubRenderer({ capacity: 256, delayMs: () => 5 });
  const hostedEnv = { MODE: 'hosted', DATA_DIR: dataDir, MONGODB_URI: '', RENDERER_URL: stub.url };
  const hosted = await Promise.all([startServiceProcess(API_MAIN, hostedEnv, { startTimeoutMs: 120_000 }), startServiceProcess(API_MAIN, hostedEnv, { startTimeoutMs: 120_000 })]);
  processes.push(...hosted);
  const attempts = 3 * limit;
  const answers = await Promise.all(
    Array.from({ length: attempts }, (_, i) =>
      fetch(`${(hosted[i % 2] as ServiceProcess).base}/api/screenshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': secret },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/' }),
      }).then((r) => r.status),
    ),
  );
  // Allowed: past the limiter, i.e. not a 429 (the stub shares this busy process, so a few may time out behind it).
  const allowed = answers.filter((s) => s !== 429).length;
  const servedHere = answers.filter((s) => s === 200).length;
  row('captures allowed in a minute, one key, 2 API processes, 1 store', `${allowed} of ${attempts} at once (limit ${limit}; the rest 429; ${servedHere} served)`, `exactly ${limit}`, allowed === limit);
  await stub.close();

  console.log('\n| Measure | Measured | Goal | |\n|---|---|---|---|');
  for (const [what, measured, goal, met] of table) console.log(`| ${what} | ${measured} | ${goal} | ${met} |`);
} finally {
  await Promise.all(processes.map((p) => p.stop(5000)));
  await fake.close();
  await fixtures.close();
  rmSync(tmp, { recursive: true, force: true });
}
