import { expect } from 'chai';
import type { Store } from '../../../../lib/store/store.ts';
import { verifySignature } from '../../../../lib/webhook-signature.ts';
import { expectEventually } from '../../../support/eventually.ts';
import { startLoggingPages } from '../../../support/logging-pages.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../../../support/processes.ts';
import { forEachStoreBackend, type TestStore } from '../../../support/store-backends.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../support/webhook-receiver.ts';

forEachStoreBackend('asynchronous captures survive SIGKILL and share one store between API processes (real processes, remote renderer)', function (backend) {
  this.timeout(240_000);
  let pages: Awaited<ReturnType<typeof startLoggingPages>>;
  let renderer: ServiceProcess;
  let receiver: WebhookReceiver;
  let shared: TestStore;
  let store: Store;
  let apis: ServiceProcess[] = [];
  let key: string;
  let signingSecret: string;

  before(async () => {
    pages = await startLoggingPages();
    renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2' });
  });
  after(async () => {
    await renderer?.stop();
    await pages?.close();
  });
  beforeEach(async () => {
    shared = await backend.create();
    store = shared.store;
    const account = await store.createAccount({ name: 'Acme' });
    const site = await store.createSite({ accountId: account.id, name: 's', allowedDomains: [] });
    const issued = await store.createKey({ accountId: account.id, name: 'k', kind: 'site', siteId: site.id });
    key = issued.secret;
    signingSecret = issued.signingSecret;
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await Promise.all(apis.map((api) => api.stop(5000)));
    apis = [];
    await receiver.close();
    await shared.dispose();
  });

  const startApi = async () => {
    const api = await startServiceProcess(API_MAIN, {
      MODE: 'hosted',
      ...shared.env,
      RENDERER_URL: renderer.base,
      RATE_LIMIT_PER_MINUTE: '1000',
      JOB_LEASE_MS: '1500',
      JOB_POLL_INTERVAL_MS: '100',
      ASYNC_CAPTURE_RETRY_BASE_MS: '100',
      ASYNC_CAPTURE_SHARE_PERCENT: '100',
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '1000',
    });
    apis.push(api);
    return api;
  };
  const submit = (api: ServiceProcess, body: object, headers: Record<string, string> = {}) =>
    fetch(`${api.base}/api/captures`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers }, body: JSON.stringify(body) });
  const captureIds = async () => (await store.listJobs((await store.listAccounts())[0]!.id, 'capture', 1000)).map((job) => job.id);
  const states = async () => Promise.all((await captureIds()).map(async (id) => (await store.getJob(id))!));
  const deliveredIds = () => new Set(receiver.deliveries.map((d) => JSON.parse(d.body).id as string));
  /** No capture ran twice at once: each page's loads, in order, start after the previous one ended. */
  const expectNoOverlappingLoads = (names: string[]) => {
    for (const name of names) {
      const requests = pages.requests(name).sort((a, b) => a.start - b.start);
      for (let i = 1; i < requests.length; i++) expect(requests[i]!.start, `${name} was loaded again before its first load ended`).to.be.at.least(requests[i - 1]!.end);
    }
  };

  it('loses nothing when the API is killed with SIGKILL mid-job: after a restart every capture succeeds, its webhook arrives signed, and no capture ran twice at once', async () => {
    const first = await startApi();
    const names = Array.from({ length: 6 }, (_, i) => `kill-${i}`);
    const response = await submit(first, { captures: names.map((name) => ({ url: pages.url(name, 1500), webhookUrl: receiver.url })) });
    expect(response.status).to.equal(202);
    await expectEventually(async () => expect((await states()).filter((job) => job.state === 'running')).to.not.be.empty, 60_000);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const runningAtKill = (await states()).filter((job) => job.state === 'running').map((job) => job.id);
    expect(runningAtKill, 'jobs were held by the killed process').to.not.be.empty;

    await startApi();
    await expectEventually(async () => expect((await states()).map((job) => job.state)).to.deep.equal(names.map(() => 'succeeded')), 120_000);
    await expectEventually(async () => expect(deliveredIds()).to.deep.equal(new Set(await captureIds())), 60_000);
    for (const delivery of receiver.deliveries) expect(verifySignature(signingSecret, delivery.headers['viewfinder-signature'] as string, delivery.body)).to.equal(true);
    for (const job of await states()) expect(job.attempts, job.id).to.equal(runningAtKill.includes(job.id) ? 2 : 1);
    expectNoOverlappingLoads(names);
  });

  it('delivers webhooks that were waiting for a retry when the API was killed with SIGKILL', async () => {
    const failing = await startWebhookReceiver({ statuses: [500, 500, 500, 500, 500, 500] });
    try {
      const first = await startApi();
      const response = await submit(first, { captures: ['hook-0', 'hook-1'].map((name) => ({ url: pages.url(name), webhookUrl: failing.url })) });
      expect(response.status).to.equal(202);
      await expectEventually(async () => expect(failing.deliveries.length).to.be.at.least(2), 60_000);
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      const ids = await captureIds();
      const webhookJobs = await Promise.all(ids.map(async (id) => (await store.findJobByIdempotencyKey((await store.getJob(id))!.ownerId, `webhook:${id}`))!));
      expect(webhookJobs.map((job) => job.state), 'webhooks still waiting at the kill').to.not.include('succeeded');

      await startApi();
      await expectEventually(async () => {
        const done = await Promise.all(webhookJobs.map(async (job) => (await store.getJob(job.id))!.state));
        expect(done).to.deep.equal(['succeeded', 'succeeded']);
      }, 60_000);
      const delivered = new Set(failing.deliveries.slice(6).map((d) => JSON.parse(d.body).id as string));
      expect(delivered).to.deep.equal(new Set(ids));
    } finally {
      await failing.close();
    }
  });

  it('runs each job exactly once with two API processes on one store', async () => {
    const [one, two] = await Promise.all([startApi(), startApi()]);
    const names = Array.from({ length: 16 }, (_, i) => `pair-${i}`);
    const half = names.length / 2;
    const [a, b] = await Promise.all([
      submit(one, { captures: names.slice(0, half).map((name) => ({ url: pages.url(name) })) }),
      submit(two, { captures: names.slice(half).map((name) => ({ url: pages.url(name) })) }),
    ]);
    expect([a.status, b.status]).to.deep.equal([202, 202]);
    await expectEventually(async () => expect((await states()).map((job) => job.state)).to.deep.equal(names.map(() => 'succeeded')), 120_000);
    for (const job of await states()) expect(job.attempts, `${job.id} (last error: ${job.lastError})`).to.equal(1);
    for (const name of names) expect(pages.requests(name), name).to.have.length(1);
  });

  it('finishes on the other process, after their lease, the jobs of one SIGKILLed mid-job: every capture succeeds, its webhook arrives, no capture ran twice at once', async () => {
    const pair = await Promise.all([startApi(), startApi()]);
    const names = Array.from({ length: 6 }, (_, i) => `pair-kill-${i}`);
    const response = await submit(pair[0]!, { captures: names.map((name) => ({ url: pages.url(name, 1500), webhookUrl: receiver.url })) });
    expect(response.status).to.equal(202);
    const heldBy = (api: ServiceProcess, job: { lockedBy: string | null }) => job.lockedBy?.split('/')[1] === String(api.child.pid);
    let holder: ServiceProcess | undefined;
    await expectEventually(async () => {
      const running = (await states()).filter((job) => job.state === 'running');
      holder = pair.find((api) => running.some((job) => heldBy(api, job)));
      expect(holder, 'a process holding a running capture').to.not.equal(undefined);
    }, 60_000);
    holder!.child.kill('SIGKILL');
    await new Promise((resolve) => holder!.child.once('exit', resolve));
    const heldAtKill = (await states()).filter((job) => job.state === 'running' && heldBy(holder!, job)).map((job) => job.id);
    expect(heldAtKill, 'captures held by the killed process').to.not.be.empty;

    await expectEventually(async () => expect((await states()).map((job) => job.state)).to.deep.equal(names.map(() => 'succeeded')), 120_000);
    await expectEventually(async () => expect(deliveredIds()).to.deep.equal(new Set(await captureIds())), 60_000);
    for (const job of await states()) expect(job.attempts, job.id).to.equal(heldAtKill.includes(job.id) ? 2 : 1);
    expectNoOverlappingLoads(names);
  });

  it('answers, from the other process, a capture submitted to one: its status while queued and its result once done', async () => {
    const [one, two] = await Promise.all([startApi(), startApi()]);
    const status = (api: ServiceProcess, id: string) => fetch(`${api.base}/api/captures/${id}`, { headers: { 'x-api-key': key } }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const submitted = (await (await submit(one, { url: pages.url('across', 1000) })).json()) as { id: string };
    const early = await status(two, submitted.id);
    expect(early.status).to.equal(200);
    expect(early.body.id).to.equal(submitted.id);
    await expectEventually(async () => expect((await status(two, submitted.id)).body.status).to.equal('succeeded'), 60_000);
    const done = await status(two, submitted.id);
    expect(done.body.result.image).to.match(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(pages.requests('across')).to.have.length(1);
  });

  it('makes one job from a submit retried with the same Idempotency-Key, even against two processes at once', async () => {
    const [one, two] = await Promise.all([startApi(), startApi()]);
    const body = { url: pages.url('idempotent') };
    const answers = await Promise.all([one, two, one, two].map((api) => submit(api, body, { 'Idempotency-Key': 'order-9' }).then((r) => r.json() as Promise<{ id: string }>)));
    expect(new Set(answers.map((answer) => answer.id)).size).to.equal(1);
    expect(await captureIds()).to.deep.equal([answers[0]!.id]);
  });
});
