import net from 'node:net';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { openS3BlobStore } from '../../../../lib/blobs/s3-blob-store.ts';
import type { Site } from '../../../../lib/store/store.ts';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import type { Lookup } from '../../../../services/renderer/src/guard/network-guard.ts';
import { capturedLogger } from '../../../support/captured-logger.ts';
import { expectEventually } from '../../../support/eventually.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { describeOnS3, freshBucket } from '../../../support/object-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../support/webhook-receiver.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * Captures written to a client's bucket on a real S3 gateway (versitygw on loopback, which
 * STORAGE_ENDPOINT_ALLOWLIST admits here as an operator admits an in-cluster store), read back
 * through S3 and through the presigned URLs the API answers; and every way a destination can fail
 * (wrong keys, no such bucket, no DNS answer, a server that never answers), synchronous and
 * asynchronous, with the credentials in no answer, log line, job row or metric.
 */
describeOnS3('captures delivered to a storage destination (versitygw, real Chromium)', function (s3) {
  this.timeout(90_000);
  const QUICK = { ASYNC_CAPTURE_RETRY_BASE_MS: '50', ASYNC_CAPTURE_MAX_ATTEMPTS: '2', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_MS: '200', JOB_POLL_INTERVAL_MS: '50' };
  const WRONG_SECRET = 'wrong-secret-9f8e7d6c5b4a39281706';
  let fixtures: FixtureServer;
  let bucket: Awaited<ReturnType<typeof freshBucket>>;
  let hosted: HostedHarness;
  let site: Site;
  let lines: string[];
  let receiver: WebhookReceiver | undefined;
  // Only this resolver knows storage.gone.test, and it never answers it.
  const lookup: Lookup = async (hostname) => {
    if (hostname === 'storage.gone.test') throw Object.assign(new Error('getaddrinfo ENOTFOUND storage.gone.test'), { code: 'ENOTFOUND' });
    return [{ address: '127.0.0.1', family: 4 }];
  };

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    bucket = await freshBucket(s3);
    const captured = capturedLogger();
    lines = captured.lines;
    hosted = await startHosted({ env: { ...QUICK, STORAGE_ENDPOINT_ALLOWLIST: new URL(s3.endpoint).hostname, STORAGE_UPLOAD_TIMEOUT_MS: '2000' }, captures: true, lookup, logger: captured.logger });
    site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'shop', allowedDomains: ['127.0.0.1'] });
    const registered = await admin().post('/api/destinations', {
      name: 'archive',
      endpoint: s3.endpoint,
      bucket: bucket.options.bucket,
      region: s3.region,
      pathStyle: true,
      keyTemplate: 'shots/{date}/{id}.{format}',
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
  });
  afterEach(async () => {
    await hosted.close();
    await receiver?.close();
    receiver = undefined;
    await bucket.dispose();
  });

  const admin = () => hosted.api(hosted.fullKey);
  const objects = async () => {
    const store = await openS3BlobStore(bucket.options);
    const keys: string[] = [];
    for await (const { key } of store.list('')) keys.push(key);
    return { store, keys };
  };
  const today = () => new Date().toISOString().slice(0, 10);
  const secrets = () => [s3.secretAccessKey, WRONG_SECRET];
  const expectNoSecret = (text: string, what: string) => {
    for (const secret of secrets()) expect(text, what).to.not.include(secret);
  };
  const capture = (storage: object, extra: object = {}) => admin().post('/api/screenshot', { url: fixtures.url('/geometry'), site_id: site.id, storage, ...extra });
  const breakCredentials = () => admin().patch('/api/destinations/archive', { credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: WRONG_SECRET } }).expect(200);

  describe('synchronous (POST /api/screenshot)', () => {
    it('writes the PNG to the bucket under the expanded key and answers where it is instead of the image', async () => {
      const before = await uploads('uploaded');
      const answer = await capture({ destination: 'archive' });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body).to.not.have.property('image');
      expect(answer.body).to.deep.include({ success: true, url: fixtures.url('/geometry'), quality: 'standard', width: 1280, height: 720, site_id: site.id });
      const { storage } = answer.body;
      expect(storage.key).to.match(new RegExp(`^shots/${today()}/cap_[0-9a-f]{24}\\.png$`));
      expect(storage).to.deep.include({ destination: 'archive', bucket: bucket.options.bucket, url: `${s3.endpoint}/${bucket.options.bucket}/${storage.key}` });
      expect(storage.etag).to.be.a('string').and.not.equal('');
      expect(storage).to.not.have.property('presignedUrl');

      const { store, keys } = await objects();
      expect(keys).to.deep.equal([storage.key]);
      const object = (await store.getBuffer(storage.key))!;
      expect(object.info.contentType).to.equal('image/png');
      expect(object.bytes.length).to.equal(answer.body.fileSize);
      expect(PNG.sync.read(object.bytes).width).to.equal(1280);

      expect((await hosted.store.listUsage(hosted.account.id)).find((row) => row.scope === 'site')).to.deep.include({ captures: 1, failures: 0, bytes: object.bytes.length });
      expect(await uploads('uploaded')).to.equal(before + 1);
      expectNoSecret(lines.join('\n'), 'logs');
      expectNoSecret(JSON.stringify(answer.body), 'answer');
    });

    it('takes a key override and a format, and answers a presigned GET URL that reads the object back until it expires, and is refused once altered', async () => {
      const answer = await capture({ destination: 'archive', key: 'latest/{id}.{format}', presign: 300 }, { format: 'jpeg' });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      const { storage } = answer.body;
      expect(storage.key).to.match(/^latest\/cap_[0-9a-f]{24}\.jpeg$/);
      expect(Date.parse(storage.presignedUrlExpiresAt) - Date.now()).to.be.within(250_000, 300_000);
      const presigned = new URL(storage.presignedUrl);
      expect(presigned.searchParams.get('X-Amz-Expires')).to.equal('300');
      expectNoSecret(storage.presignedUrl, 'presigned URL');

      // Plain fetch, no credentials: the signature in the query is all the gateway checks.
      const read = await fetch(presigned);
      expect(read.status).to.equal(200);
      expect(read.headers.get('content-type')).to.equal('image/jpeg');
      const bytes = Buffer.from(await read.arrayBuffer());
      expect(bytes.length).to.equal(answer.body.fileSize);
      expect(bytes.subarray(0, 3).toString('hex')).to.equal('ffd8ff');

      const longer = new URL(presigned);
      longer.searchParams.set('X-Amz-Expires', '604800');
      expect((await fetch(longer)).status, 'an altered expiry').to.equal(403);
    });

    it('answers 502 naming the refusal when the keys are wrong, writes nothing, counts a failure, and shows the secret nowhere', async () => {
      await breakCredentials();
      const before = await uploads('rejected');
      const answer = await capture({ destination: 'archive' });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(502);
      expect(answer.body.success).to.equal(false);
      expect(answer.body.error).to.match(/^storage destination http:\/\/127\.0\.0\.1:\d+ answered 403 (SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId)/);
      expect(answer.body.error).to.not.include(s3.accessKeyId);
      expect((await objects()).keys).to.deep.equal([]);
      expect((await hosted.store.listUsage(hosted.account.id)).find((row) => row.scope === 'site')).to.deep.include({ captures: 0, failures: 1 });
      expect(await uploads('rejected')).to.equal(before + 1);
      expectNoSecret(JSON.stringify(answer.body), 'answer');
      expectNoSecret(lines.join('\n'), 'logs');
      expectNoSecret(await apiRegistry.metrics(), 'metrics');
      expect(await apiRegistry.metrics()).to.not.include(bucket.options.bucket);
    });

    it('answers 502 NoSuchBucket for a bucket that does not exist', async () => {
      await admin().patch('/api/destinations/archive', { bucket: `${bucket.options.bucket}-missing` }).expect(200);
      const answer = await capture({ destination: 'archive' });
      expect(answer.status).to.equal(502);
      expect(answer.body.error).to.match(/answered 404 NoSuchBucket/);
    });

    it('refuses to register a name that does not resolve (400), and answers 502 before rendering when one stops resolving', async () => {
      const port = new URL(s3.endpoint).port;
      const refused = await admin().post('/api/destinations', { name: 'gone', endpoint: `http://storage.gone.test:${port}`, bucket: bucket.options.bucket, pathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }).expect(400);
      expect(refused.body.error).to.equal('storage endpoint storage.gone.test does not resolve');
      // As if it had resolved when it was registered.
      await hosted.store.createDestination({ accountId: hosted.account.id, name: 'gone', endpoint: `http://storage.gone.test:${port}`, bucket: bucket.options.bucket, region: 'us-east-1', pathStyle: true, keyTemplate: '{id}.{format}', credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
      const before = await uploads('unreachable');
      const answer = await capture({ destination: 'gone' });
      expect(answer.status).to.equal(502);
      expect(answer.body.error).to.equal('storage endpoint storage.gone.test does not resolve');
      expect(await uploads('unreachable')).to.equal(before + 1);
    });

    it('answers 502 at the upload deadline when the destination never answers, and leaves nothing behind', async () => {
      const silent = await silentServer();
      try {
        await hosted.store.createDestination({ accountId: hosted.account.id, name: 'silent', endpoint: `http://127.0.0.1:${silent.port}`, bucket: 'silent-bucket', region: 'us-east-1', pathStyle: true, keyTemplate: '{id}.{format}', credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
        const before = await uploads('timeout');
        const answer = await capture({ destination: 'silent' });
        expect(answer.status).to.equal(502);
        expect(answer.body.error).to.match(/^storage destination http:\/\/127\.0\.0\.1:\d+ did not finish its answer within the upload deadline \(STORAGE_UPLOAD_TIMEOUT_MS\)$/);
        expect(silent.connections()).to.equal(1);
        expect(await uploads('timeout')).to.equal(before + 1);
      } finally {
        await silent.close();
      }
    });

    it('answers 406 when Accept allows only the image: with storage the answer is JSON', async () => {
      const answer = await capture({ destination: 'archive' }).set('Accept', 'image/png');
      expect(answer.status).to.equal(406);
      expect((await objects()).keys).to.deep.equal([]);
    });
  });

  describe('asynchronous (POST /api/captures)', () => {
    const finished = async (id: string) => {
      await expectEventually(async () => expect((await admin().get(`/api/captures/${id}`)).body.status).to.be.oneOf(['succeeded', 'failed']), 60_000);
      return (await admin().get(`/api/captures/${id}`)).body;
    };

    it('writes the image under the job id, answers where it is in the status and the webhook, keeps no copy, and no credential in the job row', async () => {
      receiver = await startWebhookReceiver();
      const submitted = await admin().post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id, webhookUrl: receiver.url, storage: { destination: 'archive' } });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
      const id = submitted.body.id as string;
      const status = await finished(id);
      expect(status.status, JSON.stringify(status)).to.equal('succeeded');
      expect(status.result).to.not.have.property('image');
      expect(status.result.storage).to.deep.include({ destination: 'archive', bucket: bucket.options.bucket, key: `shots/${today()}/${id}.png` });
      const { store, keys } = await objects();
      expect(keys).to.deep.equal([`shots/${today()}/${id}.png`]);
      expect(PNG.sync.read((await store.getBuffer(keys[0]!))!.bytes).height).to.equal(720);

      const raw = await admin().get(`/api/captures/${id}`).set('Accept', 'image/png');
      expect(raw.status).to.equal(409);
      expect(raw.body.error).to.equal(`Capture ${id} was written to storage destination archive (shots/${today()}/${id}.png): the image is there, not here`);

      await expectEventually(async () => expect(receiver!.deliveries).to.have.length(1), 30_000);
      const webhook = JSON.parse(receiver.deliveries[0]!.body);
      expect(webhook).to.deep.include({ event: 'capture.succeeded', imageUrl: null });
      expect(webhook.storage).to.deep.equal(status.result.storage);

      const row = JSON.stringify(await hosted.store.getJob(id));
      expect(row).to.not.include(s3.secretAccessKey).and.not.include(s3.accessKeyId);
      expect(await hosted.store.getJobBlob(id)).to.equal(null);
    });

    it('retries a refused upload with the capture\'s backoff, then fails with the reason in the status and the webhook, and no secret in the job row or the logs', async () => {
      await breakCredentials();
      receiver = await startWebhookReceiver();
      const submitted = await admin().post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id, webhookUrl: receiver.url, storage: { destination: 'archive', presign: 60 } });
      expect(submitted.status).to.equal(202);
      const status = await finished(submitted.body.id);
      expect(status).to.deep.include({ status: 'failed', attempts: 2, maxAttempts: 2 });
      expect(status.lastError).to.match(/^storage destination http:\/\/127\.0\.0\.1:\d+ answered 403 (SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId)/);
      await expectEventually(async () => expect(receiver!.deliveries).to.have.length(1), 30_000);
      const webhook = JSON.parse(receiver.deliveries[0]!.body);
      expect(webhook).to.deep.include({ event: 'capture.failed', error: status.lastError, storage: null });
      expect((await objects()).keys).to.deep.equal([]);
      expectNoSecret(JSON.stringify(await hosted.store.getJob(submitted.body.id)), 'job row');
      expectNoSecret(lines.join('\n'), 'logs');
      expectNoSecret(JSON.stringify(status), 'status');
    });

    it('refuses at submit (403) a destination whose endpoint the guard refuses, queueing nothing', async () => {
      await hosted.store.createDestination({ accountId: hosted.account.id, name: 'metadata', endpoint: 'http://169.254.169.254', bucket: 'b-bucket', region: 'us-east-1', pathStyle: true, keyTemplate: '{id}.{format}', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
      const answer = await admin().post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id, storage: { destination: 'metadata' } }).expect(403);
      expect(answer.body.error).to.match(/^storage endpoint refused: 169\.254\.169\.254 is a link-local address/);
      expect(await hosted.store.countJobs({ ownerId: hosted.account.id, type: 'capture', states: ['queued', 'running'] })).to.equal(0);
    });
  });
});

async function uploads(outcome: string): Promise<number> {
  const metric = await apiRegistry.getSingleMetric('viewfinder_storage_uploads_total')?.get();
  return metric?.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

/** A loopback server that accepts connections and never answers, counting them. */
async function silentServer(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
