import { expect } from 'chai';
import { PNG } from 'pngjs';
import { verifySignature } from '../../../../lib/webhook-signature.ts';
import { MAX_BATCH } from '../../../../services/api/src/captures/config.ts';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import { expectEventually } from '../../../support/eventually.ts';
import { closedPort, startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { decodeDataUri } from '../../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../support/webhook-receiver.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

describe('asynchronous captures, hosted (real Chromium, loopback receivers)', function () {
  this.timeout(90_000);
  const QUICK = { WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_MS: '200', ASYNC_CAPTURE_RETRY_BASE_MS: '50', JOB_POLL_INTERVAL_MS: '50' };
  let fixtures: FixtureServer;
  let hosted: HostedHarness;
  let receivers: WebhookReceiver[] = [];

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  afterEach(async () => {
    await hosted?.close();
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
  });

  const start = async (env: Record<string, string> = {}) => {
    hosted = await startHosted({ env: { ...QUICK, ...env }, captures: true });
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'shop', allowedDomains: ['127.0.0.1'] });
    return site;
  };
  const receiver = async (statuses: number[] = []) => {
    const started = await startWebhookReceiver({ statuses });
    receivers.push(started);
    return started;
  };
  const statusOf = async (id: string, key = hosted.fullKey) => (await hosted.api(key).get(`/api/captures/${id}`)).body;
  const finished = async (id: string) => {
    await expectEventually(async () => expect((await statusOf(id)).status).to.be.oneOf(['succeeded', 'failed']), 30_000);
    return statusOf(id);
  };

  it('answers 202 with the id, queued and the status URL (also Location), then succeeds with the synchronous answer and the bytes', async () => {
    const site = await start();
    const response = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id });
    expect(response.status, JSON.stringify(response.body)).to.equal(202);
    expect(response.body).to.have.all.keys('id', 'status', 'statusUrl');
    expect(response.body.status).to.equal('queued');
    expect(response.body.id).to.match(/^job_[0-9a-f]{24}$/);
    // On PUBLIC_BASE_URL (here its default), not on the Host the request named (public-base-url.test.ts).
    expect(response.body.statusUrl).to.equal(`http://localhost:3000/api/captures/${response.body.id}`);
    expect(response.headers.location).to.equal(response.body.statusUrl);

    const status = await finished(response.body.id);
    expect(status).to.deep.include({ id: response.body.id, status: 'succeeded', attempts: 1, lastError: null, url: fixtures.url('/geometry') });
    expect(Date.parse(status.createdAt)).to.be.at.most(Date.parse(status.startedAt));
    expect(Date.parse(status.startedAt)).to.be.at.most(Date.parse(status.finishedAt));
    expect(Date.parse(status.expiresAt) - Date.parse(status.finishedAt)).to.be.closeTo(86_400_000, 1000);
    expect(status.result).to.deep.include({ success: true, url: fixtures.url('/geometry'), quality: 'standard', width: 1280, height: 720, site_id: site.id });
    const image = decodeDataUri(status.result.image);
    expect(image.png.width).to.equal(1280);
    expect(status.result.fileSize).to.equal(image.bytes.length);

    const raw = await hosted.api(hosted.fullKey).get(`/api/captures/${response.body.id}`).set('Accept', 'image/*').buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
    expect(raw.status).to.equal(200);
    expect(raw.headers['content-type']).to.equal('image/png');
    expect(Buffer.compare(raw.body as Buffer, image.bytes)).to.equal(0);
    expect(PNG.sync.read(raw.body as Buffer).height).to.equal(720);

    // The dashboard's usage counts it like a synchronous capture.
    const usage = (await hosted.store.listUsage(hosted.account.id)).find((row) => row.scope === 'site');
    expect(usage).to.deep.include({ captures: 1, bytes: image.bytes.length });
  });

  it('posts a signed webhook to an allowlisted loopback receiver: the signature checks with the key\'s signing secret, the body names the capture and where to fetch its image', async () => {
    const site = await start();
    const hook = await receiver();
    const { key, signingSecret, secret } = await hosted.store.createKey({ accountId: hosted.account.id, name: 'hooks', kind: 'site', siteId: site.id });
    const response = await hosted.api(secret).post('/api/captures', { url: fixtures.url('/geometry'), webhookUrl: hook.url });
    expect(response.status, JSON.stringify(response.body)).to.equal(202);
    await expectEventually(async () => expect(hook.deliveries).to.have.length(1), 30_000);
    const [delivery] = hook.deliveries;
    expect(delivery!.headers['content-type']).to.equal('application/json');
    expect(verifySignature(signingSecret, delivery!.headers['viewfinder-signature'] as string, delivery!.body)).to.equal(true);
    expect(verifySignature(signingSecret, delivery!.headers['viewfinder-signature'] as string, delivery!.body.replace('succeeded', 'failed')), 'a changed body').to.equal(false);
    expect(verifySignature('another secret', delivery!.headers['viewfinder-signature'] as string, delivery!.body), 'another secret').to.equal(false);
    const body = JSON.parse(delivery!.body);
    expect(body).to.deep.include({ id: response.body.id, event: 'capture.succeeded', status: 'succeeded', error: null, imageUrl: response.body.statusUrl, statusUrl: response.body.statusUrl });
    expect(body.metadata).to.deep.include({ url: fixtures.url('/geometry'), width: 1280, height: 720, site_id: site.id });
    expect(body.metadata).to.not.have.property('image');
    expect(delivery!.headers['viewfinder-event']).to.equal('capture.succeeded');

    // The image URL answers the image to the receiver's key (supertest's server lives per request: same path, this app).
    const image = await hosted.api(secret).get(new URL(body.imageUrl).pathname).set('Accept', 'image/png');
    expect(image.status).to.equal(200);
    expect(Number(image.headers['viewfinder-width'])).to.equal(1280);
    await expectEventually(async () => expect((await statusOf(response.body.id)).webhook).to.deep.include({ status: 'delivered', attempts: 1, lastError: null }), 30_000);
    expect(key.id).to.be.a('string');
  });

  it('retries a receiver that fails twice and then answers 200: three calls, the attempts in the status, and no call after the 2xx', async () => {
    const site = await start();
    const hook = await receiver([500, 503]);
    const response = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id, webhookUrl: hook.url });
    await expectEventually(async () => expect((await statusOf(response.body.id)).webhook?.status).to.equal('delivered'), 30_000);
    const status = await statusOf(response.body.id);
    expect(status.webhook).to.deep.include({ url: hook.url, attempts: 3, lastError: 'webhook receiver answered 503' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hook.deliveries).to.have.length(3);
    expect(new Set(hook.deliveries.map((d) => d.headers['viewfinder-delivery'])).size, 'one delivery id for every attempt').to.equal(1);

    const metrics = await apiRegistry.getMetricsAsJSON();
    // A histogram's samples name themselves (…_count); a gauge's and a counter's do not.
    const sample = (name: string, labels: Record<string, string>, sampleName = name) =>
      metrics
        .find((metric) => metric.name === name)
        ?.values.find((value) => ((value as { metricName?: string }).metricName ?? name) === sampleName && Object.entries(labels).every(([k, v]) => value.labels[k] === v))?.value;
    expect(sample('viewfinder_jobs', { type: 'capture', state: 'succeeded' })).to.equal(1);
    expect(sample('viewfinder_jobs', { type: 'webhook', state: 'succeeded' })).to.equal(1);
    expect(sample('viewfinder_webhook_deliveries_total', { outcome: 'failed' })).to.be.at.least(2);
    expect(sample('viewfinder_webhook_deliveries_total', { outcome: 'delivered' })).to.be.at.least(1);
    expect(sample('viewfinder_async_capture_duration_seconds', { outcome: 'succeeded' }, 'viewfinder_async_capture_duration_seconds_count')).to.be.at.least(1);
  });

  it('sends the webhook of a capture that failed for good, with the error', async () => {
    const site = await start({ ASYNC_CAPTURE_MAX_ATTEMPTS: '2' });
    const hook = await receiver();
    // Nothing listens there: each attempt fails with a connection error, which is worth retrying, until none is left.
    const refusing = `http://127.0.0.1:${await closedPort()}/`;
    const response = await hosted.api(hosted.fullKey).post('/api/captures', { url: refusing, site_id: site.id, webhookUrl: hook.url });
    expect(response.status, JSON.stringify(response.body)).to.equal(202);
    const status = await finished(response.body.id);
    expect(status).to.deep.include({ status: 'failed', attempts: 2 });
    expect(status.lastError).to.match(/ERR_CONNECTION_REFUSED/);
    await expectEventually(async () => expect(hook.deliveries).to.have.length(1), 30_000);
    const body = JSON.parse(hook.deliveries[0]!.body);
    expect(body).to.deep.include({ id: response.body.id, event: 'capture.failed', status: 'failed', metadata: null, imageUrl: null, error: status.lastError });
    const image = await hosted.api(hosted.fullKey).get(`/api/captures/${response.body.id}`).set('Accept', 'image/png');
    expect(image.status).to.equal(409);
  });

  it('answers the same job to a retried submit with the same Idempotency-Key, and makes one job', async () => {
    const site = await start();
    const submit = () => hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id }).set('Idempotency-Key', 'order-42');
    const [first, second] = [await submit(), await submit()];
    expect(first.status).to.equal(202);
    expect(second.status).to.equal(202);
    expect(second.body.id).to.equal(first.body.id);
    const again = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id, idempotencyKey: 'order-42' });
    expect(again.body.id).to.equal(first.body.id);
    expect((await hosted.store.listJobs(hosted.account.id, 'capture', 10)).map((job) => job.id)).to.deep.equal([first.body.id]);
    const conflicting = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id, idempotencyKey: 'a' }).set('Idempotency-Key', 'b');
    expect(conflicting.status).to.equal(400);
  });

  it(`takes a batch of captures (at most ${MAX_BATCH}) and answers one id per capture, in order`, async () => {
    const site = await start();
    const urls = ['/geometry', '/simple', '/geometry'].map((p) => fixtures.url(p));
    const response = await hosted.api(hosted.fullKey).post('/api/captures', { captures: urls.map((url) => ({ url, site_id: site.id })) });
    expect(response.status, JSON.stringify(response.body)).to.equal(202);
    expect(response.body.captures).to.have.length(3);
    expect(response.headers.location).to.equal(undefined);
    for (const [i, accepted] of (response.body.captures as { id: string }[]).entries()) {
      const status = await finished(accepted.id);
      expect(status).to.deep.include({ status: 'succeeded', url: urls[i] });
    }
    const tooMany = await hosted.api(hosted.fullKey).post('/api/captures', { captures: Array.from({ length: MAX_BATCH + 1 }, () => ({ url: urls[0], site_id: site.id })) });
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body.error).to.equal(`captures must be a list of 1 to ${MAX_BATCH} captures`);
    const oneBad = await hosted.api(hosted.fullKey).post('/api/captures', { captures: [{ url: urls[0], site_id: site.id }, { url: 'ftp://x', site_id: site.id }] });
    expect(oneBad.status).to.equal(400);
    expect(oneBad.body.error).to.equal('captures[1]: Invalid URL: a valid http or https URL is required');
    expect(await hosted.store.countJobs({ ownerId: hosted.account.id, type: 'capture', states: ['queued', 'running', 'succeeded', 'failed'] })).to.equal(3);
  });

  it('applies the synchronous rules at submit and queues nothing when one fails: validation, site, domains, rate limit', async () => {
    const site = await start();
    const restricted = await hosted.store.createKey({ accountId: hosted.account.id, name: 'r', kind: 'site', siteId: site.id, restrictDomains: true });
    const api = hosted.api(hosted.fullKey);
    expect((await api.post('/api/captures', { url: 'not a url', site_id: site.id })).status).to.equal(400);
    expect((await api.post('/api/captures', { url: fixtures.url('/geometry') })).body.error).to.equal('site_id is required with a full-access API key');
    expect((await api.post('/api/captures', { url: fixtures.url('/geometry'), site_id: 'site_missing' })).status).to.equal(404);
    expect((await hosted.api(restricted.secret).post('/api/captures', { url: 'http://localhost/' })).status).to.equal(403);
    expect((await api.post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id, webhookUrl: 'javascript:alert(1)' })).status).to.equal(400);
    expect((await hosted.api('vf_wrong').post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id })).status).to.equal(401);
    expect(await hosted.store.countJobs({ states: ['queued', 'running', 'succeeded', 'failed'] })).to.equal(0);

    await hosted.store.setAccountRateLimit(hosted.account.id, 2);
    const batch = await api.post('/api/captures', { captures: [1, 2, 3].map(() => ({ url: fixtures.url('/geometry'), site_id: site.id })) });
    expect(batch.status).to.equal(429);
    expect(batch.headers['retry-after']).to.match(/^\d+$/);
    expect(await hosted.store.countJobs({ states: ['queued', 'running', 'succeeded', 'failed'] }), 'a refused batch queues none of its captures').to.equal(0);
  });

  it('refuses a submit past the account\'s bound on waiting captures with 429 and Retry-After', async () => {
    const site = await start({ ASYNC_MAX_QUEUED_PER_ACCOUNT: '2' });
    await hosted.captures!.runner.stop(1000);
    const submit = () => hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id });
    expect((await submit()).status).to.equal(202);
    expect((await submit()).status).to.equal(202);
    const refused = await submit();
    expect(refused.status).to.equal(429);
    expect(refused.headers['retry-after']).to.equal('30');
    expect(refused.body).to.deep.equal({ success: false, error: 'Too many captures waiting: 2 of at most 2 are queued or running; retry once some have finished' });
  });

  it('answers 404 for an unknown id, another account\'s capture, and a capture past its retention', async () => {
    const site = await start({ CAPTURE_RESULT_TTL_SECONDS: '2' });
    const other = await hosted.store.createAccount({ name: 'Other' });
    const { secret: otherKey } = await hosted.store.createKey({ accountId: other.id, name: 'k', kind: 'full' });
    const response = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id });
    expect((await hosted.api(hosted.fullKey).get('/api/captures/job_000000000000000000000000')).status).to.equal(404);
    const theirs = await hosted.api(otherKey).get(`/api/captures/${response.body.id}`);
    expect(theirs.status).to.equal(404);
    expect(theirs.body).to.deep.equal({ success: false, error: `Capture ${response.body.id} not found` });
    expect((await finished(response.body.id)).status).to.equal('succeeded');
    await expectEventually(async () => expect((await hosted.api(hosted.fullKey).get(`/api/captures/${response.body.id}`)).status).to.equal(404), 10_000);
  });
});
