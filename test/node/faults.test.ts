import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import type { Job } from '../../lib/store/jobs.ts';
import type { Store } from '../../lib/store/store.ts';
import { freshMongoUri } from '../support/store-backends.ts';
import {
  CHART,
  CaptureLoad,
  IMAGE_ARGS,
  NODE_BRIDGE,
  ONE_SMALL_RENDERER,
  REPO,
  allReady,
  apiCall,
  buildAndLoadImage,
  clusterIP,
  createAccount,
  createSecret,
  describeOnRealNode,
  describePods,
  helm,
  isReady,
  kubectl,
  pods,
  startFerretDBOnBridge,
  until,
  type CaptureOutcome,
} from './cluster.ts';
import { startFaultFixtures, type FaultFixtures } from './fault-fixtures.ts';

/**
 * Faults of the control plane and the store under load, on the real node (issue #44): hosted mode
 * with 2 API replicas on MongoDB (FerretDB on the node's bridge address), installed once for all
 * faults; two clients capturing through the API Service across each fault until everything is back
 * (then paused while the work queued across it finishes), and for each fault asynchronous captures
 * (with webhooks) and a monitor run queued across it, and a Site, an ApiKey and a PageMonitor
 * applied for the operator:
 *   - kube-apiserver stopped for 30 s, then started again;
 *   - etcd restarted;
 *   - the MongoDB server (FerretDB) stopped for 20 s, then started again on the same address;
 *   - the kubelet restarted;
 *   - an API pod and the leader operator pod deleted at the same time.
 * A component is stopped by the PID its start script recorded and started again with the same
 * command line, environment, working directory and log (so that up.sh and down.sh still know it);
 * after() runs node/up.sh, which starts whatever is still down. Each test prints what clients saw
 * and the time to recover; docs/operations.md ("Faults of the control plane and the store") holds
 * the figures of a run. The assertions are on behaviour, never on those times: what the store, the
 * page server and the webhook receiver recorded says whether a queued job was lost or ran twice.
 */
describeOnRealNode('faults of the control plane and the store under load, on a real node (hosted mode, MongoDB on FerretDB)', function (node) {
  const REPLICAS = 2;
  const POD_COUNT = REPLICAS + 1 + 2; // API, one renderer, two operator pods
  const CLIENTS = 2;
  const namespace = `viewfinder-test-${randomBytes(4).toString('hex')}-faults`;
  const release = 'vff';
  const api = `${release}-viewfinder-api`;
  const figures: string[] = [];
  let ferret: ReturnType<typeof startFerretDBOnBridge> | undefined;
  let ferretHalted = false;
  /** The pages captured and the webhook receiver, on the bridge, in a thread of their own (fault-fixtures.ts). */
  let origins: FaultFixtures | undefined;
  let store: (Store & { dropDatabase(): Promise<void> }) | undefined;
  let load: CaptureLoad | undefined;
  let base: string;
  let account: { id: string; key: string };
  let siteId: string;
  /** The work queued across each fault, once checked: checked again at the end, when nothing may have run again. */
  const checkedWork: Queued[] = [];
  /** Components this leg stopped and has not started again: after() brings the node back whatever happened. */
  const stopped = new Map<string, StoppedComponent>();

  const call = (method: string, route: string, body?: unknown, key = account.key) => apiCall(base, key, method, route, body);
  const apply = (objects: unknown[]) => kubectl(['apply', '--namespace', namespace, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  const leader = () => kubectl(['get', 'lease', `${release}-viewfinder-operator`, '--namespace', namespace, '-o', 'jsonpath={.spec.holderIdentity}']).stdout.trim();

  // ---------------------------------------------------------------- the node's components
  const pidFile = (name: string) => (CONTROL_PLANE.includes(name) ? `${node.stateDir}/run/${name}.pid` : `${node.stateDir}/node/run/${name}.pid`);
  const pidOf = (name: string) => Number(readFileSync(pidFile(name), 'utf8').trim());

  /** SIGTERM to the component (SIGKILL after 20 s), keeping what it needs to start again as it was. */
  async function stopComponent(name: string): Promise<void> {
    const pid = pidOf(name);
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
    const env = Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    stopped.set(name, { argv, env, cwd: readlinkSync(`/proc/${pid}/cwd`) });
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 20_000;
    while (existsSync(`/proc/${pid}`)) {
      if (Date.now() > deadline) process.kill(pid, 'SIGKILL');
      await sleep(100);
    }
  }

  /** The component again, detached in its own session as its start script starts it, appending to its log. */
  function startComponent(name: string): void {
    const saved = stopped.get(name);
    if (!saved) throw new Error(`${name} was not stopped by this leg`);
    const out = openSync(`${node.stateDir}/logs/${name}.log`, 'a');
    try {
      writeFileSync(out, `\n==== ${new Date().toISOString()} start ${name} (test/node/faults.test.ts) ====\n`);
      const child = spawn(saved.argv[0]!, saved.argv.slice(1), { detached: true, stdio: ['ignore', out, out], env: saved.env, cwd: saved.cwd });
      child.unref();
      writeFileSync(pidFile(name), String(child.pid));
    } finally {
      closeSync(out);
    }
    stopped.delete(name);
  }

  const apiServerReady = () => kubectl(['get', '--raw', '/readyz', '--request-timeout=3s']).status === 0;
  const nodeReady = () => {
    const got = kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}', '--request-timeout=5s']);
    return got.status === 0 && got.stdout.trim() === 'True';
  };

  // ---------------------------------------------------------------- work queued across a fault
  interface Queued {
    slug: string;
    captures: string[];
    monitorId: string;
    runJobId: string;
  }

  /** Three asynchronous captures of slow pages, each with a webhook, and a monitor run now. */
  async function queueWork(slug: string): Promise<Queued> {
    const submitted = await call('POST', '/api/captures', {
      captures: [0, 1, 2].map((i) => ({ url: origins!.pageUrl(`${slug}-async-${i}`, 3000), site_id: siteId, webhookUrl: origins!.hookUrl(slug) })),
    });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    const monitor = await call('POST', '/api/monitors', { name: `${slug}-run`, schedule: '0 0 1 1 *', pages: [{ name: 'home', url: origins!.pageUrl(`${slug}-monitor`, 3000), removeAds: false }] });
    expect(monitor.status, JSON.stringify(monitor.body)).to.equal(201);
    const run = await call('POST', `/api/monitors/${monitor.body.id}/runs`);
    expect(run.status, JSON.stringify(run.body)).to.equal(202);
    return { slug, captures: (submitted.body.captures as Array<{ id: string }>).map((capture) => capture.id), monitorId: monitor.body.id, runJobId: run.body.jobId };
  }

  /** Every job of the work queued across a fault, from the store: the captures, their webhooks and the monitor run. */
  async function jobsOf(queued: Queued): Promise<Job[]> {
    const webhooks = (await store!.listJobs(account.id, 'webhook', 1000)).filter((job) => queued.captures.includes(job.payload.captureId as string));
    return [...((await Promise.all([...queued.captures, queued.runJobId].map((id) => store!.getJob(id)))) as Job[]), ...webhooks];
  }

  /**
   * What says a queued job was lost or ran twice, from what the store, the page server and the
   * webhook receiver recorded (empty when none was). Lost: a job that did not succeed. Twice: a
   * capture's page loaded more often than its job was attempted, or two of its loads at once (two
   * holders), or a capture with more than one webhook job, or a delivery other than one `succeeded`,
   * or a monitor with more than one run. A job is attempted again only after a failed attempt, which
   * the store records (`attempts`, `lastError`): that is a retry (docs/async.md), not a second run.
   */
  async function lostOrRunTwice(queued: Queued): Promise<string[]> {
    const jobs = await jobsOf(queued);
    const found = jobs.filter((job) => job.state !== 'succeeded').map((job) => `${job.type} ${job.id} lost: ${job.state} (${job.lastError})`);
    for (const [i, id] of queued.captures.entries()) {
      const job = jobs.find((candidate) => candidate.id === id)!;
      const loads = (await origins!.requests(`${queued.slug}-async-${i}`)).sort((a, b) => a.start - b.start);
      if (loads.length > job.attempts) found.push(`capture ${id} ran twice: its page loaded ${loads.length} times in ${job.attempts} attempt(s)`);
      if (loads.some((load, n) => n > 0 && load.start < loads[n - 1]!.end)) found.push(`capture ${id} ran twice at once: ${JSON.stringify(loads)}`);
      const webhooks = jobs.filter((candidate) => candidate.type === 'webhook' && candidate.payload.captureId === id);
      if (webhooks.length !== 1) found.push(`capture ${id} has ${webhooks.length} webhook jobs`);
      const delivered = (await origins!.deliveries(id)).map((delivery) => delivery.status);
      if (delivered.join() !== 'succeeded') found.push(`capture ${id}'s webhook deliveries: ${JSON.stringify(delivered)}`);
    }
    const runs = (await call('GET', `/api/monitors/${queued.monitorId}/runs`)).body as Array<{ trigger: string }>;
    if (runs.length !== 1) found.push(`monitor ${queued.monitorId} has ${runs.length} runs`);
    return found;
  }

  /**
   * The work queued across a fault finished, none of it lost or run twice (lostOrRunTwice), and no
   * attempt failed but those `expected` (the documented ones of the fault): in these faults nothing
   * a capture needs fails (its page server answers throughout, a store outage is waited out while
   * the lease holds), so any other retry is a defect too, named with the error its attempt recorded.
   */
  async function expectRunOnce(queued: Queued, expected: Array<{ type: string; error: RegExp; why: string }> = []): Promise<string> {
    await until(`the jobs queued across the fault (${queued.slug}) and their webhooks to finish`, async () => {
      const now = await jobsOf(queued);
      return now.length === queued.captures.length * 2 + 1 && now.every((job) => job.state === 'succeeded' || job.state === 'failed');
    }, 180_000, () => describePods(namespace));
    expect(await lostOrRunTwice(queued), 'queued jobs lost or run twice').to.deep.equal([]);
    const retried = (await jobsOf(queued)).filter((job) => job.attempts !== 1);
    const named = (job: Job) => `${job.type} ${job.id}: ${job.attempts} attempts, the failed one recorded ${JSON.stringify(job.lastError)}`;
    const documented = (job: Job) => expected.find((retry) => retry.type === job.type && job.attempts === 2 && retry.error.test(job.lastError ?? ''));
    expect(retried.filter((job) => !documented(job)).map(named), 'queued jobs retried after a failed attempt').to.deep.equal([]);
    for (const job of retried) note(`  retried as documented: ${named(job)} (${documented(job)!.why})`);
    checkedWork.push(queued);
    // A monitor's capture that clients preempt is taken again in a quiet moment (monitors/run.ts): more loads of its page than one are by design under load.
    const monitorLoads = (await origins!.requests(`${queued.slug}-monitor`)).length;
    expect(monitorLoads, 'page loads of the monitor run').to.be.at.least(1);
    return `${queued.captures.length} asynchronous captures (with webhooks) and 1 monitor run queued across it: each ran once (1 attempt; 1 page load and 1 webhook delivery per capture; the run's page loaded ${monitorLoads} time(s))`;
  }

  // ---------------------------------------------------------------- the operator's objects
  const operatorObjects = (slug: string) => [
    { apiVersion: 'viewfinder.dev/v1alpha1', kind: 'Site', metadata: { name: slug, namespace }, spec: { account: account.id, allowedDomains: [NODE_BRIDGE] } },
    { apiVersion: 'viewfinder.dev/v1alpha1', kind: 'ApiKey', metadata: { name: `${slug}-key`, namespace }, spec: { account: account.id, siteRef: slug, restrictDomains: true } },
    {
      apiVersion: 'viewfinder.dev/v1alpha1',
      kind: 'PageMonitor',
      metadata: { name: `${slug}-monitor`, namespace },
      spec: { account: account.id, schedule: '0 0 1 1 *', pages: [{ name: 'home', url: origins!.pageUrl(`${slug}-pagemonitor`) }] },
    },
  ];
  const readyNames = (slug: string) => [`site/${slug}`, `apikey/${slug}-key`, `pagemonitor/${slug}-monitor`];
  const operatorConverged = (slug: string) => kubectl(['wait', '--namespace', namespace, '--for=condition=Ready', ...readyNames(slug), '--timeout=2s']).status === 0;

  /** One Secret per ApiKey, one site, key and monitor in the API per object, each Ready; the key captures. */
  async function expectConverged(slug: string): Promise<void> {
    const apiKey = JSON.parse(kubectl(['get', `apikey/${slug}-key`, '--namespace', namespace, '-o', 'json']).stdout) as { metadata: { uid: string } };
    const secrets = (JSON.parse(kubectl(['get', 'secrets', '--namespace', namespace, '-o', 'json']).stdout).items as Array<{ metadata: { name: string; ownerReferences?: Array<{ uid: string }> } }>)
      .filter((secret) => secret.metadata.ownerReferences?.some((owner) => owner.uid === apiKey.metadata.uid));
    expect(secrets.map((secret) => secret.metadata.name), `Secrets of ApiKey ${slug}-key`).to.deep.equal([`${slug}-key`]);
    const managed = (items: Array<{ managedBy: { name: string } | null }>, name: string) => items.filter((item) => item.managedBy?.name === name);
    expect(managed((await call('GET', '/api/sites')).body.sites, slug), `sites of Site ${slug}`).to.have.length(1);
    expect(managed((await call('GET', '/api/keys')).body.keys, `${slug}-key`), `keys of ApiKey ${slug}-key`).to.have.length(1);
    expect(managed((await call('GET', '/api/monitors')).body, `${slug}-monitor`), `monitors of PageMonitor ${slug}-monitor`).to.have.length(1);
    const secret = Buffer.from(kubectl(['get', 'secret', `${slug}-key`, '--namespace', namespace, '-o', 'jsonpath={.data.apiKey}']).stdout, 'base64').toString('utf8');
    const captured = await apiCall(base, secret, 'POST', '/api/screenshot', { url: origins!.pageUrl(`${slug}-key-check`) });
    expect(captured.status, JSON.stringify(captured.body).slice(0, 300)).to.equal(200);
  }

  // ---------------------------------------------------------------- what clients saw
  const failuresBetween = (from: number, to: number) => load!.outcomes.filter((outcome) => outcome.ended >= from && outcome.started <= to && outcome.status !== 200);
  const succeededSince = (from: number) => load!.outcomes.some((outcome) => outcome.started >= from && outcome.status === 200);
  /** Failures counted by what they said: "N × STATUS message". */
  const describeOutcomes = (outcomes: CaptureOutcome[]) => {
    const counts = new Map<string, number>();
    for (const outcome of outcomes) {
      const said = `${outcome.status} ${outcome.error ?? ''}`.replace(/\d+ s\b/g, 'N s').replace(/Retry-After \d+/g, 'Retry-After N').slice(0, 200);
      counts.set(said, (counts.get(said) ?? 0) + 1);
    }
    return [...counts].map(([said, count]) => `${count} × ${said}`).join('\n');
  };

  /**
   * The clients capture across each fault, from before it until everything is back. Then they
   * pause while the work queued across the fault finishes and is checked: on the renderer's two
   * slots, a monitor's capture yields to clients and waits up to a minute for a quiet moment
   * (monitors/slots.ts), which under load tells nothing about the fault.
   */
  async function loadRunning(): Promise<void> {
    const since = Date.now();
    load!.setClients(CLIENTS);
    await until('the clients capturing', () => succeededSince(since), 120_000, () => describeOutcomes(load!.outcomes.filter((o) => o.started >= since)));
  }
  const loadPaused = () => load!.stop();

  /** Waits for everything to be back: node Ready, every pod of the release Ready, a capture, the operator's objects Ready. Seconds since `since`. */
  async function recovered(slug: string, since: number): Promise<{ seconds: number; capturesBack: number }> {
    let capturesBack = NaN;
    await until(`recovery after the fault (${slug})`, () => {
      if (Number.isNaN(capturesBack) && succeededSince(since)) capturesBack = (Date.now() - since) / 1000;
      if (Number.isNaN(capturesBack) || !apiServerReady() || !nodeReady()) return false;
      try {
        const current = pods(namespace, `app.kubernetes.io/instance=${release}`);
        return current.length === POD_COUNT && current.every(isReady) && operatorConverged(slug);
      } catch {
        return false; // the API server went away again between two calls
      }
    }, 240_000, () => `${describePods(namespace)}\n${kubectl(['get', 'sites,apikeys,pagemonitors', '--namespace', namespace, '-o', 'wide']).output}`);
    return { seconds: (Date.now() - since) / 1000, capturesBack };
  }

  const note = (line: string) => {
    figures.push(line);
    console.log(`      ${line}`);
  };

  before(async function () {
    this.timeout(1_200_000);
    buildAndLoadImage(node.stateDir);
    ferret = startFerretDBOnBridge();
    const database = freshMongoUri(ferret.uri, 'viewfinder_faults');
    const { openMongoStore } = await import('../../lib/store/mongo.ts');
    store = await openMongoStore({ uri: database });
    origins = await startFaultFixtures(NODE_BRIDGE);
    const created = kubectl(['create', 'namespace', namespace]);
    expect(created.status, created.output).to.equal(0);
    createSecret(namespace, 'external-mongodb', { 'mongodb-uri': database });
    const installed = helm([
      'install', release, CHART, '--namespace', namespace,
      '-f', `${CHART}/ci/external-mongodb-values.yaml`,
      ...IMAGE_ARGS,
      ...ONE_SMALL_RENDERER,
      '--set', 'mongodb.external.existingSecret=external-mongodb',
      '--set', 'renderer.token.existingSecret=',
      '--set', `api.replicas=${REPLICAS}`,
      '--set-json', `renderer.privateNetworkAllowlist=${JSON.stringify([NODE_BRIDGE])}`,
      '--set-string', `api.extraEnv.PRIVATE_NETWORK_ALLOWLIST=${NODE_BRIDGE}`,
      '--set', `operator.watchNamespaces={${namespace}}`,
    ]);
    expect(installed.status, installed.output).to.equal(0);
    await allReady(namespace, release, POD_COUNT);
    base = `http://${clusterIP(namespace, api)}`;
    // A rate limit the load never reaches: a 429 would hide what a fault does.
    account = createAccount(namespace, release, 'Acme', ['--rate-limit', '1000000']);
    const site = await call('POST', '/api/sites', { name: 'load', allowedDomains: [] });
    expect(site.status, JSON.stringify(site.body)).to.equal(201);
    siteId = site.body.id;
    // Two clients capture through the API Service across every fault (loadRunning, loadPaused).
    load = new CaptureLoad(`${base}/api`, account.key, origins.pageUrl('load'), { site_id: siteId });
    await loadRunning();
  });

  after(async function () {
    this.timeout(600_000);
    // The node back as it was, whatever failed: what this leg stopped, then up.sh for anything else.
    for (const name of [...stopped.keys()]) {
      try {
        startComponent(name);
      } catch (err) {
        console.log(`      could not start ${name} again: ${String(err)}`);
      }
    }
    if (ferretHalted) ferret?.resume();
    const up = spawnSync(`${REPO}test/cluster/node/up.sh`, [node.stateDir], { encoding: 'utf8' });
    if (up.status !== 0) console.log(`      test/cluster/node/up.sh ${node.stateDir} failed (${up.status}):\n${up.stderr.slice(-3000)}`);
    await load?.stop();
    if (figures.length > 0) console.log(`\n    faults of the control plane and the store under load:\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    // Sites, ApiKeys and PageMonitors carry the operator's finalizer: deleted while the operator still runs.
    kubectl(['delete', 'sites.viewfinder.dev,apikeys.viewfinder.dev,pagemonitors.viewfinder.dev', '--all', '--namespace', namespace, '--wait=true', '--timeout=90s']);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=240s']);
    await store?.close();
    await origins?.close();
    ferret?.stop();
  });

  it('kube-apiserver stopped for 30 s: captures keep working, nothing queued is lost or run twice, the operator converges once it is back', async function () {
    const slug = 'apiserver';
    await loadRunning();
    const queued = await queueWork(slug);
    // Applied just before the API server goes: the operator is reconciling them when it does.
    const applied = apply(operatorObjects(slug));
    expect(applied.status, applied.output).to.equal(0);
    const from = Date.now();
    await stopComponent('kube-apiserver');
    await sleep(30_000);
    const restarted = Date.now();
    startComponent('kube-apiserver');
    const back = await recovered(slug, restarted);
    const during = failuresBetween(from, restarted);
    const after = failuresBetween(restarted, Date.now());
    // The node's Ready condition: the node controller marks the node (and its pods, so every
    // endpoint) not ready once the API server is back, while the kubelet's lease is older than the
    // node-monitor grace period, until the kubelet reports again.
    const readySince = kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].status.conditions[?(@.type=="Ready")].lastTransitionTime}']).stdout.trim();
    const span = after.length > 0 ? `${((Math.min(...after.map((o) => o.started)) - restarted) / 1000).toFixed(1)} to ${((Math.max(...after.map((o) => o.ended)) - restarted) / 1000).toFixed(1)} s after its start` : '';
    note(
      `kube-apiserver down 30 s: ${load!.outcomes.filter((o) => o.started >= from && o.started < restarted && o.status === 200).length} captures succeeded while it was down, ${during.length} failed; ` +
        `after its start ${after.length} failed${span ? ` (${span}; the node Ready again since ${((new Date(readySince).getTime() - restarted) / 1000).toFixed(1)} s after its start)` : ''}; all back ${back.seconds.toFixed(1)} s after its start (API server ready, node Ready, pods Ready, operator converged)`,
    );
    expect(describeOutcomes(during), 'captures need no API server: none may fail while it is down').to.equal('');
    expect(describeOutcomes(after.filter((o) => o.status !== 503 || !o.error?.includes('Retry-After'))), 'once it is back, a capture fails only as a 503 with Retry-After (no renderer ready while the node is marked not ready)').to.equal('');
    await loadPaused();
    await expectConverged(slug);
    note(`  ${await expectRunOnce(queued)}`);
  });

  it('etcd restarted: captures keep working, nothing queued is lost or run twice, the operator converges', async function () {
    const slug = 'etcd';
    await loadRunning();
    const queued = await queueWork(slug);
    const applied = apply(operatorObjects(slug));
    expect(applied.status, applied.output).to.equal(0);
    const from = Date.now();
    await stopComponent('etcd');
    const restarted = Date.now();
    startComponent('etcd');
    const back = await recovered(slug, restarted);
    const failures = failuresBetween(from, Date.now());
    note(`etcd restarted: ${failures.length} captures failed; all back ${back.seconds.toFixed(1)} s after its start`);
    expect(describeOutcomes(failures), 'captures need no etcd: none may fail').to.equal('');
    await loadPaused();
    await expectConverged(slug);
    note(`  ${await expectRunOnce(queued)}`);
  });

  it('the MongoDB server stopped for 20 s: hosted requests answer 503 with Retry-After at once, never hang; nothing queued is lost or run twice; the operator converges', async function () {
    const slug = 'mongodb';
    await loadRunning();
    const queued = await queueWork(slug);
    const from = Date.now();
    ferret!.halt();
    ferretHalted = true;
    // The operator reconciles these while the store is away: the API answers it 503 and it tries again.
    const applied = apply(operatorObjects(slug));
    expect(applied.status, applied.output).to.equal(0);
    const probes: Array<{ route: string; status: number; retryAfter: string | null; error?: string; seconds: number }> = [];
    const probe = async (method: string, route: string, body?: unknown) => {
      const sent = Date.now();
      const seconds = () => (Date.now() - sent) / 1000;
      try {
        // The client's own timeout (capture()'s): an answer must arrive within it.
        const response = await fetch(`${base}${route}`, {
          method,
          headers: { 'x-api-key': account.key, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(90_000),
        });
        probes.push({ route: `${method} ${route}`, status: response.status, retryAfter: response.headers.get('retry-after'), error: (await response.text()).slice(0, 200), seconds: seconds() });
      } catch (err) {
        probes.push({ route: `${method} ${route}`, status: 0, retryAfter: null, error: String((err as Error).cause ?? err), seconds: seconds() });
      }
    };
    const outageEnds = Date.now() + 20_000;
    while (Date.now() < outageEnds - 2000) {
      await Promise.all([
        probe('POST', '/api/screenshot', { url: origins!.pageUrl(`${slug}-probe`), site_id: siteId }),
        probe('GET', `/api/captures/${queued.captures[0]}`),
        probe('POST', '/api/captures', { url: origins!.pageUrl(`${slug}-probe-async`), site_id: siteId }),
        probe('GET', '/api/monitors'),
      ]);
    }
    const restarted = Date.now();
    ferret!.resume();
    ferretHalted = false;
    const back = await recovered(slug, restarted);
    const during = load!.outcomes.filter((outcome) => outcome.started >= from && outcome.started < restarted);
    const failures = failuresBetween(from, Date.now());
    note(`MongoDB server down 20 s: ${probes.length} probes of 4 routes answered ${[...new Set(probes.map((p) => p.status))].join(', ')} (Retry-After ${[...new Set(probes.map((p) => p.retryAfter))].join(', ')}) in ${Math.min(...probes.map((p) => p.seconds)).toFixed(1)} to ${Math.max(...probes.map((p) => p.seconds)).toFixed(1)} s; load: ${during.length} captures started meanwhile, ${failures.length} failed (${[...new Set(failures.map((o) => o.status))].join(', ') || 'none'}); all back ${back.seconds.toFixed(1)} s after its start, captures ${back.capturesBack.toFixed(1)} s after`);
    expect(probes.filter((p) => p.status !== 503 || !p.retryAfter), `every request needing the store answers 503 with Retry-After:\n${JSON.stringify(probes.filter((p) => p.status !== 503 || !p.retryAfter), null, 1)}`).to.deep.equal([]);
    expect(describeOutcomes(failures.filter((o) => o.status !== 503 || !o.error?.includes('Retry-After'))), "the load's failures are 503s with Retry-After").to.equal('');
    // No probe left anything behind: the submit refused while the store was away queued nothing.
    expect(await origins!.requests(`${slug}-probe-async`), 'the refused asynchronous submits ran nothing').to.deep.equal([]);
    await loadPaused();
    await expectConverged(slug);
    // A monitor run's own reads and writes of the store do not wait for it (a capture job's do): one
    // that meets the outage fails its attempt and runs again, its run recorded once (docs/operations.md).
    const storeAway = { type: 'monitor-run', error: new RegExp(`ECONNREFUSED ${NODE_BRIDGE.replaceAll('.', '\\.')}:${new URL(ferret!.uri).port}$|^Server selection timed out`), why: 'the store was away' };
    note(`  ${await expectRunOnce(queued, [storeAway])}`);
  });

  it('the kubelet restarted: captures keep working, nothing queued is lost or run twice, the operator converges', async function () {
    const slug = 'kubelet';
    await loadRunning();
    const queued = await queueWork(slug);
    const from = Date.now();
    await stopComponent('kubelet');
    const applied = apply(operatorObjects(slug));
    expect(applied.status, applied.output).to.equal(0);
    const restarted = Date.now();
    startComponent('kubelet');
    const back = await recovered(slug, restarted);
    const failures = failuresBetween(from, Date.now());
    note(`kubelet restarted: ${failures.length} captures failed; all back ${back.seconds.toFixed(1)} s after its start`);
    expect(describeOutcomes(failures), 'captures need no kubelet: none may fail').to.equal('');
    await loadPaused();
    await expectConverged(slug);
    note(`  ${await expectRunOnce(queued)}`);
  });

  it('an API pod and the leader operator pod deleted at once: captures keep working, nothing queued is lost or run twice, another operator pod leads and converges', async function () {
    const slug = 'pods';
    await loadRunning();
    const queued = await queueWork(slug);
    const apiPod = pods(namespace, 'app.kubernetes.io/component=api').find(isReady)!.metadata.name;
    const first = leader();
    expect(first, 'an operator pod leads').to.not.equal('');
    const from = Date.now();
    const deleted = kubectl(['delete', 'pod', apiPod, first, '--namespace', namespace, '--wait=false']);
    expect(deleted.status, deleted.output).to.equal(0);
    const applied = apply(operatorObjects(slug));
    expect(applied.status, applied.output).to.equal(0);
    const back = await recovered(slug, from);
    await until('another operator pod to lead', () => leader() !== '' && leader() !== first, 60_000);
    const failures = failuresBetween(from, Date.now());
    note(`API pod ${apiPod} and leader ${first} deleted: ${failures.length} captures failed; ${leader()} leads; all back ${back.seconds.toFixed(1)} s after the deletion`);
    expect(describeOutcomes(failures), 'a graceful deletion drains: no capture may fail').to.equal('');
    await loadPaused();
    await expectConverged(slug);
    // The deleted pod gives its jobs half of SHUTDOWN_TIMEOUT_MS, then puts those still running back
    // in the queue for the other replica: a monitor run waiting for a quiet tier under the load is one.
    const handedOver = { type: 'monitor-run', error: /^interrupted: the process running it stopped$/, why: 'handed over by the deleted API pod' };
    note(`  ${await expectRunOnce(queued, [handedOver])}`);
    await allReady(namespace, release, POD_COUNT);
  });

  it('ran nothing queued across a fault again later: one page load per attempt, one webhook delivery per capture, one run per monitor', async function () {
    // A job finished in the store cannot be claimed again; this looks for the late evidence of one
    // that ran twice anyway (a second holder's page load or delivery), minutes after the first faults.
    expect((await Promise.all(checkedWork.map(lostOrRunTwice))).flat(), `the work of ${checkedWork.map((work) => work.slug).join(', ')}`).to.deep.equal([]);
    note(`nothing queued across the ${checkedWork.length} faults ran again by the end of the leg`);
  });
});

/** The control plane's components (start.sh's, PIDs in STATE/run); the node's are in STATE/node/run. */
const CONTROL_PLANE = ['etcd', 'kube-apiserver', 'kube-controller-manager'];

interface StoppedComponent {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
