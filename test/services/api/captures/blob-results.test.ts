import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { openSqliteStore } from '../../../../lib/store/sqlite.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { createApp } from '../../../../services/api/src/app.ts';
import { captureJobHandler, resultKeyOf } from '../../../../services/api/src/captures/capture-job.ts';
import { createCaptureJobs, type CaptureJobs } from '../../../../services/api/src/captures/service.ts';
import { createNetworkGuard } from '../../../../services/renderer/src/guard/network-guard.ts';
import { forEachBlobStore, type TestBlobStore } from '../../../support/blob-stores.ts';
import { eventually } from '../../../support/eventually.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { decodeDataUri, sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';

const KEY = 'self-hosted-key';

forEachBlobStore('asynchronous results in the blob store', function (backend) {
  this.timeout(60_000);
  let fixtures: FixtureServer;
  let dataDir: string;
  let store: Store;
  let blobStore: TestBlobStore;
  let captures: CaptureJobs | undefined;

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-blob-results-'));
    store = openSqliteStore({ dataDir });
    blobStore = await backend.create();
  });
  afterEach(async () => {
    await captures?.runner.stop(1000);
    captures = undefined;
    await store.close();
    await blobStore.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const configOf = () => testConfig({ API_KEY: KEY, DATA_DIR: dataDir, JOB_POLL_INTERVAL_MS: '50' });
  const apiWith = async (withRunner = true) => {
    const config = configOf();
    const renderer = await sharedRenderer();
    captures = createCaptureJobs({ store, renderer, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist), blobs: blobStore.blobs });
    if (withRunner) captures.runner.start();
    return request(createApp({ config, renderer, logger: silentLogger, captures }).callback());
  };

  it('writes the image under captures/<id> (not beside the job) and answers it as JSON and as bytes', async () => {
    const api = await apiWith();
    const accepted = await api.post('/captures').set('X-API-Key', KEY).send({ url: fixtures.url('/geometry') });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
    const id = accepted.body.id as string;
    await eventually('the capture succeeds', async () => (await store.getJob(id))?.state === 'succeeded', 30_000);

    const stored = await blobStore.blobs.getBuffer(resultKeyOf(id));
    expect(stored?.info.contentType).to.equal('image/png');
    expect(await store.getJobBlob(id), 'the job row keeps no copy').to.equal(null);

    const status = await api.get(`/captures/${id}`).set('X-API-Key', KEY);
    expect(status.body).to.deep.include({ status: 'succeeded' });
    expect(decodeDataUri(status.body.result.image).png.width).to.equal(1280);
    const raw = await api.get(`/captures/${id}`).set('X-API-Key', KEY).set('Accept', 'image/png');
    expect(raw.status).to.equal(200);
    expect(Buffer.compare(raw.body as Buffer, stored!.bytes)).to.equal(0);
  });

  it('still answers a result written beside its job before the blob store held results', async () => {
    const api = await apiWith(false);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);
    const { job } = await store.enqueueJob({ type: 'capture', ownerId: 'self-hosted', payload: { request: { url: fixtures.url('/geometry') }, statusBase: 'http://localhost/captures' }, maxAttempts: 1 });
    await store.claimJob(['capture'], 'older-release', 60_000);
    const metadata = { success: true, format: 'png', width: 1280, height: 800, fileSize: png.byteLength };
    await store.completeJob(job.id, 'older-release', { result: metadata, blob: png, expiresAt: new Date(Date.now() + 3_600_000) });

    const raw = await api.get(`/captures/${job.id}`).set('X-API-Key', KEY).set('Accept', 'image/png');
    expect(raw.status).to.equal(200);
    expect(Buffer.compare(raw.body as Buffer, png)).to.equal(0);
  });

  it("sweeps the images of results past their retention, and nothing of another user's", async () => {
    const config = configOf();
    const handler = captureJobHandler({ store, renderer: await sharedRenderer(), config: config.captures, logger: silentLogger, blobs: blobStore.blobs, queueWebhook: async () => undefined });
    await blobStore.blobs.put(resultKeyOf('job_0123456789abcdef01234567'), Buffer.from('png'));
    await blobStore.blobs.put('monitor-images/img_0123456789abcdef01234567.png', Buffer.from('png'));
    const written = (await blobStore.blobs.head(resultKeyOf('job_0123456789abcdef01234567')))!.lastModified.getTime();

    // A sweep within the retention (and its margin) keeps the image; one past it removes it.
    await handler.sweep!(new Date(written + config.captures.resultTtlMs));
    expect(await blobStore.blobs.head(resultKeyOf('job_0123456789abcdef01234567'))).to.not.equal(undefined);
    await handler.sweep!(new Date(written + config.captures.resultTtlMs + 11 * 60 * 1000));
    expect(await blobStore.blobs.head(resultKeyOf('job_0123456789abcdef01234567'))).to.equal(undefined);
    expect(await blobStore.blobs.head('monitor-images/img_0123456789abcdef01234567.png')).to.not.equal(undefined);
  });
});
