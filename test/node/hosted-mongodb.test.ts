import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { openS3BlobStore } from '../../lib/blobs/s3-blob-store.ts';
import type { Job } from '../../lib/store/jobs.ts';
import type { Store } from '../../lib/store/store.ts';
import { startLoggingPages } from '../support/logging-pages.ts';
import { freshMongoUri } from '../support/store-backends.ts';
import {
  CHART,
  IMAGE_ARGS,
  NODE_BRIDGE,
  ONE_SMALL_RENDERER,
  allReady,
  buildAndLoadImage,
  clusterIP,
  counterSum,
  createAccount,
  createSecret,
  describeOnRealNode,
  describePods,
  helm,
  apiCall,
  isReady,
  kubectl,
  podBase,
  pods,
  startFerretDBOnBridge,
  startObjectStoreOnBridge,
  until,
  type Pod,
} from './cluster.ts';

/**
 * Hosted mode with 3 API replicas on an external MongoDB, on the real node: FerretDB
 * (test/cluster/ferretdb.sh) listens on the node's bridge address, its URI is in a Secret the
 * chart reads (mongodb.external.existingSecret), and the API, operator and renderer run as pods.
 * The API's blobs (asynchronous results, monitor pictures) go to an S3 bucket on versitygw
 * (test/cluster/versitygw.sh), also on the bridge, with its keys in a Secret (api.blobStore.s3);
 * the test reads them back from the bucket and through every replica.
 * Captures go through the API Service; a rate limit holds exactly across the replicas; an
 * asynchronous capture reads the same from every replica; a monitor's scheduled run is made once;
 * an API pod deleted while it runs a capture leaves it to another, and nothing is lost. The test
 * reads jobs from the same database on the host, as the pods' store sees them. Pages are served by
 * the host on the bridge address, logging every load.
 */
describeOnRealNode('the chart on a real node: hosted mode, 3 API replicas on an external MongoDB (FerretDB on the node), blobs in S3 (versitygw on the node)', function (node) {
  const REPLICAS = 3;
  const namespace = `viewfinder-test-${randomBytes(4).toString('hex')}-mongodb`;
  const release = 'vfm';
  const api = `${release}-viewfinder-api`;
  const figures: string[] = [];
  let ferret: ReturnType<typeof startFerretDBOnBridge> | undefined;
  let objectStore: Awaited<ReturnType<typeof startObjectStoreOnBridge>> | undefined;
  let pages: Awaited<ReturnType<typeof startLoggingPages>> | undefined;
  let store: (Store & { dropDatabase(): Promise<void> }) | undefined;
  let base: string;
  let account: { id: string; key: string };
  let siteId: string;
  let monitorId: string | undefined;

  const apiPods = () => pods(namespace, 'app.kubernetes.io/component=api').filter(isReady);
  const call = (method: string, route: string, body?: unknown, key = account.key, at = base) => apiCall(at, key, method, route, body);
  const metricsOf = async (pod: Pod) => (await fetch(`${podBase(pod)}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const captureJobs = async (): Promise<Job[]> => store!.listJobs(account.id, 'capture', 1000);

  before(async function () {
    this.timeout(1_200_000);
    buildAndLoadImage(node.stateDir);
    ferret = startFerretDBOnBridge();
    const database = freshMongoUri(ferret.uri, 'viewfinder_node');
    const { openMongoStore } = await import('../../lib/store/mongo.ts');
    store = await openMongoStore({ uri: database });
    pages = await startLoggingPages(NODE_BRIDGE);
    const created = kubectl(['create', 'namespace', namespace]);
    expect(created.status, created.output).to.equal(0);
    createSecret(namespace, 'external-mongodb', { 'mongodb-uri': database });
    objectStore = await startObjectStoreOnBridge(`viewfinder-node-${randomBytes(4).toString('hex')}`);
    const { accessKeyId, secretAccessKey } = objectStore.options.credentials;
    createSecret(namespace, 'object-store', { accessKeyId, secretAccessKey });
  });

  after(async function () {
    this.timeout(300_000);
    if (figures.length > 0) console.log(`\n    real node, hosted mode on an external MongoDB (FerretDB):\n${figures.map((line) => `      - ${line}`).join('\n')}\n`);
    kubectl(['delete', 'sites.viewfinder.dev,apikeys.viewfinder.dev,pagemonitors.viewfinder.dev', '--all', '--namespace', namespace, '--wait=true', '--timeout=60s']);
    helm(['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait']);
    kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=240s']);
    await store?.close();
    await pages?.close();
    ferret?.stop();
    objectStore?.stop();
  });

  it(`installs with the MongoDB URI from an existing Secret: ${REPLICAS} API pods, a renderer and two operator pods go Ready, and the chart runs no MongoDB`, async () => {
    const started = performance.now();
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
      // A killed replica's job goes to another after the lease: 10 s rather than 30 keeps the test short.
      '--set-string', 'api.extraEnv.JOB_LEASE_MS=10000',
      '--set', `operator.watchNamespaces={${namespace}}`,
      '--set', 'api.blobStore.kind=s3',
      '--set', `api.blobStore.s3.endpoint=${objectStore!.options.endpoint.origin}`,
      '--set', `api.blobStore.s3.bucket=${objectStore!.options.bucket}`,
      '--set', 'api.blobStore.s3.existingSecret=object-store',
    ]);
    expect(installed.status, installed.output).to.equal(0);
    await allReady(namespace, release, REPLICAS + 1 + 2);
    figures.push(`helm install to all ${REPLICAS + 3} pods Ready (${REPLICAS} API, 1 renderer, 2 operator): ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(pods(namespace, 'app.kubernetes.io/component=mongodb')).to.deep.equal([]);
    base = `http://${clusterIP(namespace, api)}`;
    account = createAccount(namespace, release, 'Acme');
    const site = await call('POST', '/api/sites', { name: 'shop', allowedDomains: [] });
    expect(site.status, JSON.stringify(site.body)).to.equal(201);
    siteId = site.body.id;
    // Its scheduled runs are counted later (scheduled minutes are real minutes: they pass while the other tests run).
    const monitor = await call('POST', '/api/monitors', { name: 'every-minute', schedule: '* * * * *', pages: [{ name: 'home', url: pages!.url('monitor-home'), removeAds: false }] });
    expect(monitor.status, JSON.stringify(monitor.body)).to.equal(201);
    monitorId = monitor.body.id;
  });

  it('captures through the API Service: 200 and a PNG, each of 6 a success', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => call('POST', '/api/screenshot', { url: pages!.url(`sync-${i}`), site_id: siteId })));
    for (const result of results) {
      expect(result.status, JSON.stringify(result.body).slice(0, 300)).to.equal(200);
      expect(result.body.image).to.match(/^data:image\/png;base64,iVBORw0KGgo/);
    }
  });

  it('holds a rate limit exactly across the replicas: 15 concurrent requests through the Service with a limit of 5 a minute, 5 succeed and 10 are 429', async () => {
    const LIMIT = 5;
    const REQUESTS = 15;
    const limited = createAccount(namespace, release, 'Limited', ['--rate-limit', String(LIMIT)]);
    const site = await call('POST', '/api/sites', { name: 'limited', allowedDomains: [] }, limited.key);
    expect(site.status, JSON.stringify(site.body)).to.equal(201);
    const replicas = apiPods();
    expect(replicas).to.have.length(REPLICAS);
    const refusedBefore = await Promise.all(replicas.map(async (pod) => counterSum(await metricsOf(pod), 'viewfinder_rate_limited_total')));
    const results = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) => call('POST', '/api/screenshot', { url: pages!.url(`limited-${i}`), site_id: site.body.id }, limited.key)),
    );
    const refusedBy = (await Promise.all(replicas.map(async (pod) => counterSum(await metricsOf(pod), 'viewfinder_rate_limited_total')))).map((count, i) => count - refusedBefore[i]!);
    const statuses = results.map((result) => result.status);
    figures.push(`rate limit ${LIMIT}/min, ${REQUESTS} concurrent requests through the Service: ${statuses.filter((s) => s === 200).length} × 200, ${statuses.filter((s) => s === 429).length} × 429; 429s answered per replica: ${refusedBy.join(' + ')}`);
    expect(statuses.filter((status) => status === 200), JSON.stringify(results.map((r) => [r.status, r.body?.error]))).to.have.length(LIMIT);
    expect(statuses.filter((status) => status === 429)).to.have.length(REQUESTS - LIMIT);
    expect(refusedBy.reduce((sum, count) => sum + count, 0), 'every 429 came from the rate limiter of one of the replicas').to.equal(REQUESTS - LIMIT);
    expect(refusedBy.filter((count) => count > 0).length, `the requests spread over the replicas: ${refusedBy.join(', ')}`).to.be.at.least(2);
  });

  it('shows an asynchronous capture submitted through the Service the same through every replica, from queued to succeeded', async () => {
    const submitted = await call('POST', '/api/captures', { url: pages!.url('async-one'), site_id: siteId });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    const id = submitted.body.id as string;
    const replicas = apiPods();
    expect(replicas).to.have.length(REPLICAS);
    const seen = await Promise.all(replicas.map((pod) => call('GET', `/api/captures/${id}`, undefined, account.key, podBase(pod))));
    for (const answer of seen) {
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body.id).to.equal(id);
    }
    await until('the capture to succeed', async () => (await call('GET', `/api/captures/${id}`)).body.status === 'succeeded', 120_000);
    const done = await Promise.all(replicas.map((pod) => call('GET', `/api/captures/${id}`, undefined, account.key, podBase(pod))));
    const images = new Set(done.map((answer) => answer.body.result?.image));
    expect(done.map((answer) => answer.body.status)).to.deep.equal(replicas.map(() => 'succeeded'));
    expect(images.size, 'one result, the same through every replica').to.equal(1);
    expect([...images][0]).to.match(/^data:image\/png;base64,iVBORw0KGgo/);
    const kept = await (await openS3BlobStore(objectStore!.options)).getBuffer(`captures/${id}`);
    expect(kept?.bytes.toString('base64'), 'the result every replica answers is the object in the bucket').to.equal([...images][0]!.slice('data:image/png;base64,'.length));
    figures.push(`asynchronous capture ${id}: read through each of ${replicas.length} replicas (${replicas.map((pod) => pod.status.podIP).join(', ')}), succeeded on every one; its image is captures/${id} in the bucket`);
  });

  it("makes a monitor's scheduled run once across the replicas: one run per scheduled minute, its page loaded once per run", async function () {
    this.timeout(300_000);
    const runsOf = async () => (await call('GET', `/api/monitors/${monitorId}/runs`)).body as Array<{ scheduledAt: string; trigger: string; finishedAt: string }>;
    // Which replicas ran them: a job names its holder (pod/pid/…) only while it runs.
    const runners = new Set<string>();
    const noteRunners = async () => {
      for (const job of await store!.listJobs(account.id, 'monitor-run', 1000)) if (job.payload.monitorId === monitorId && job.lockedBy) runners.add(job.lockedBy.split('/')[0]!);
    };
    await until('two scheduled runs', async () => (await noteRunners(), (await runsOf()).length >= 2), 200_000);
    // Every replica's scheduler keeps queueing: give a duplicate time to show up before counting.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const runs = await runsOf();
    const scheduled = runs.map((run) => run.scheduledAt);
    expect(new Set(scheduled).size, `one run per scheduled time: ${scheduled.join(', ')}`).to.equal(runs.length);
    for (const run of runs) expect(run.trigger).to.equal('schedule');
    const lastFinished = Math.max(...runs.map((run) => new Date(run.finishedAt).getTime()));
    expect(pages!.requests('monitor-home').filter((load) => load.start <= lastFinished), 'page loads').to.have.length(runs.length);
    const jobs = (await store!.listJobs(account.id, 'monitor-run', 1000)).filter((job) => job.payload.monitorId === monitorId && job.state === 'succeeded');
    expect(new Set(jobs.map((job) => job.payload.scheduledAt))).to.deep.equal(new Set(scheduled));
    expect(jobs.map((job) => job.attempts)).to.deep.equal(jobs.map(() => 1));
    figures.push(`monitor every minute on ${REPLICAS} replicas: ${runs.length} scheduled runs, ${runs.length} page loads, each run's job claimed once; seen running on ${[...runners].join(', ') || '(none caught while running)'}`);
    // Its baseline picture is in the bucket, and every replica serves those bytes.
    const imageId = ((await call('GET', `/api/monitors/${monitorId}`)).body.baselines as Record<string, string>).home;
    const stored = await (await openS3BlobStore(objectStore!.options)).getBuffer(`monitor-images/${imageId}.png`);
    expect(stored, `monitor-images/${imageId}.png in the bucket`).to.not.equal(undefined);
    for (const pod of apiPods()) {
      const served = await fetch(`${podBase(pod)}/api/monitors/${monitorId}/images/${imageId}`, { headers: { 'x-api-key': account.key }, signal: AbortSignal.timeout(30_000) });
      expect(served.status, `the baseline through ${pod.metadata.name}`).to.equal(200);
      expect(Buffer.from(await served.arrayBuffer()).equals(stored!.bytes), `the baseline through ${pod.metadata.name} is the object's bytes`).to.equal(true);
    }
    expect((await call('DELETE', `/api/monitors/${monitorId}`)).status).to.equal(200);
    monitorId = undefined;
  });

  it('finishes on another replica a capture whose API pod was deleted while running it; none of the batch is lost', async function () {
    this.timeout(420_000);
    const BATCH = 4;
    const names = Array.from({ length: BATCH }, (_, i) => `batch-${i}`);
    // Slow pages: each capture is still loading its page when the pod goes.
    const submitted = await call('POST', '/api/captures', { captures: names.map((name) => ({ url: pages!.url(name, 8000), site_id: siteId })) });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    const ids = (submitted.body.captures as Array<{ id: string }>).map((capture) => capture.id);
    const holders = new Map<string, Set<string>>(ids.map((id) => [id, new Set()]));
    const watch = async () => {
      for (const id of ids) {
        const holder = (await store!.getJob(id))?.lockedBy?.split('/')[0];
        if (holder) holders.get(id)!.add(holder);
      }
    };
    let victim: { id: string; pod: string } | undefined;
    await until('a capture of the batch running, its page loading', async () => {
      await watch();
      for (const [index, id] of ids.entries()) {
        const job = await store!.getJob(id);
        if (job?.state === 'running' && job.lockedBy && pages!.requests(names[index]!).length === 1) {
          victim = { id, pod: job.lockedBy.split('/')[0]! };
          return true;
        }
      }
      return false;
    }, 120_000);
    const deleted = kubectl(['delete', 'pod', victim!.pod, '--namespace', namespace, '--grace-period=0', '--force']);
    expect(deleted.status, deleted.output).to.equal(0);
    const deletedAt = Date.now();
    await until('every capture of the batch to end', async () => {
      await watch();
      const jobs = await Promise.all(ids.map((id) => store!.getJob(id)));
      return jobs.every((job) => job?.state === 'succeeded' || job?.state === 'failed');
    }, 240_000, () => describePods(namespace));
    const jobs = (await Promise.all(ids.map((id) => store!.getJob(id)))) as Job[];
    expect(jobs.map((job) => [job.id, job.state, job.lastError])).to.deep.equal(jobs.map((job) => [job.id, 'succeeded', job.lastError]));
    const retried = jobs.find((job) => job.id === victim!.id)!;
    const others = [...holders.get(victim!.id)!].filter((pod) => pod !== victim!.pod);
    expect(others, `the capture was taken by a pod other than ${victim!.pod}: ${[...holders.get(victim!.id)!].join(', ')}`).to.have.length.at.least(1);
    expect(retried.attempts, 'the deleted pod\'s attempt and the retry').to.be.at.least(2);
    const index = ids.indexOf(victim!.id);
    const loads = pages!.requests(names[index]!);
    expect(loads.length, 'its page loaded by the deleted pod, then again').to.be.at.least(2);
    expect(loads.at(-1)!.start, 'the last load after the deletion').to.be.at.least(deletedAt);
    // Each capture's answer reads the same through the Service as through the store: nothing lost.
    for (const id of ids) expect((await call('GET', `/api/captures/${id}`)).body.status).to.equal('succeeded');
    figures.push(
      `API pod ${victim!.pod} deleted (grace 0) while running ${victim!.id}: finished by ${others.join(', ')} after ${retried.attempts} attempts (last error: ${retried.lastError ?? 'none'}); ` +
        `the batch of ${BATCH}: ${jobs.filter((job) => job.state === 'succeeded').length} succeeded, attempts ${jobs.map((job) => job.attempts).join(', ')}`,
    );
    await allReady(namespace, release, REPLICAS + 1 + 2);
  });
});
