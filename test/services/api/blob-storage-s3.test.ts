import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import type { BlobStore } from '../../../lib/blobs/blob-store.ts';
import { lazyBlobStore } from '../../../lib/blobs/open.ts';
import { openS3BlobStore } from '../../../lib/blobs/s3-blob-store.ts';
import { openSqliteStore } from '../../../lib/store/sqlite.ts';
import type { Store } from '../../../lib/store/store.ts';
import { createApp } from '../../../services/api/src/app.ts';
import { createCaptureJobs, type CaptureJobs } from '../../../services/api/src/captures/service.ts';
import { lazyResultCache } from '../../../services/api/src/result-cache/open.ts';
import type { ResultCache } from '../../../services/api/src/result-cache/result-cache.ts';
import { createNetworkGuard } from '../../../services/renderer/src/guard/network-guard.ts';
import { eventually } from '../../support/eventually.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { sharedRenderer, silentLogger, testConfig } from '../../support/harness.ts';
import { describeOnS3, freshBucket } from '../../support/object-store.ts';

const KEY = 'self-hosted-key';

describeOnS3('the API with BLOB_STORE=s3 (configured from the environment, versitygw, real Chromium)', function (s3) {
  this.timeout(60_000);
  let fixtures: FixtureServer;
  let dataDir: string;
  let store: Store;
  let bucket: Awaited<ReturnType<typeof freshBucket>>;
  let inBucket: BlobStore;
  let blobs: BlobStore;
  let resultCache: ResultCache;
  let captures: CaptureJobs;

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-blob-s3-'));
    store = openSqliteStore({ dataDir });
    bucket = await freshBucket(s3);
    inBucket = await openS3BlobStore(bucket.options);
  });
  afterEach(async () => {
    await captures.runner.stop(1000);
    await Promise.all([blobs.close(), resultCache.close(), store.close()]);
    await bucket.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async () => {
    const config = testConfig({ API_KEY: KEY, DATA_DIR: dataDir, JOB_POLL_INTERVAL_MS: '50', ...bucket.env });
    expect(config.blobs.kind).to.equal('s3');
    expect(config.resultCache.backend).to.equal('blobs');
    const renderer = await sharedRenderer();
    blobs = lazyBlobStore(config.blobs);
    resultCache = lazyResultCache(config.resultCache);
    captures = createCaptureJobs({ store, renderer, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist), resultCache, blobs });
    captures.runner.start();
    return request(createApp({ config, renderer, logger: silentLogger, captures, resultCache }).callback());
  };
  const keysUnder = async (prefix: string) => {
    const keys: string[] = [];
    for await (const { key } of inBucket.list(prefix)) keys.push(key);
    return keys;
  };

  it('keeps an asynchronous capture in the bucket and answers it from there', async () => {
    const client = await api();
    const accepted = await client.post('/captures').set('X-API-Key', KEY).send({ url: fixtures.url('/geometry') });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
    const id = accepted.body.id as string;
    await eventually('the capture succeeds', async () => (await store.getJob(id))?.state === 'succeeded', 30_000);
    expect(await keysUnder('captures/')).to.deep.equal([`captures/${id}`]);
    const raw = await client.get(`/captures/${id}`).set('X-API-Key', KEY).set('Accept', 'image/png');
    expect(raw.status).to.equal(200);
    expect(Buffer.compare(raw.body as Buffer, (await inBucket.getBuffer(`captures/${id}`))!.bytes)).to.equal(0);
  });

  it('keeps the result cache in the bucket: the second request within its cacheTtl is a hit', async () => {
    const client = await api();
    const body = { url: fixtures.url('/geometry?case=s3-cache'), cacheTtl: 60 };
    const first = await client.post('/screenshot').set('X-API-Key', KEY).send(body);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.cached).to.equal(false);
    const [entry] = await keysUnder('result-cache/');
    expect(entry).to.match(/^result-cache\/[0-9a-f]{64}$/);
    const second = await client.post('/screenshot').set('X-API-Key', KEY).send(body);
    expect(second.body.cached).to.equal(true);
    expect(second.body.image).to.equal(first.body.image);
  });
});
