import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { BlobStore } from '../../../lib/blobs/blob-store.ts';
import { openS3BlobStore } from '../../../lib/blobs/s3-blob-store.ts';
import { expectEventually } from '../../support/eventually.ts';
import { startLoggingPages } from '../../support/logging-pages.ts';
import { describeOnS3, freshBucket } from '../../support/object-store.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../../support/processes.ts';
import { sqlite, type TestStore } from '../../support/store-backends.ts';

/**
 * Two real API processes (MODE=hosted) with BLOB_STORE=s3 on the test object store, a real renderer
 * process: what one writes (an asynchronous capture's image, a monitor's pictures) the other reads
 * back from the bucket, and nothing of it lands in DATA_DIR.
 */
describeOnS3('two API replicas with BLOB_STORE=s3 (real processes, versitygw)', function (s3) {
  this.timeout(240_000);
  let pages: Awaited<ReturnType<typeof startLoggingPages>>;
  let renderer: ServiceProcess;
  let shared: TestStore;
  let bucket: Awaited<ReturnType<typeof freshBucket>>;
  let inBucket: BlobStore;
  let key: string;
  let siteId: string;
  let one: ServiceProcess;
  let two: ServiceProcess;

  before(async () => {
    pages = await startLoggingPages();
    renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2' });
    shared = await sqlite.create();
    const account = await shared.store.createAccount({ name: 'Acme' });
    key = (await shared.store.createKey({ accountId: account.id, name: 'admin', kind: 'full' })).secret;
    siteId = (await shared.store.createSite({ accountId: account.id, name: 's', allowedDomains: [] })).id;
    bucket = await freshBucket(s3);
    inBucket = await openS3BlobStore(bucket.options);
    const env = { MODE: 'hosted', ...shared.env, ...bucket.env, RENDERER_URL: renderer.base, JOB_POLL_INTERVAL_MS: '100', ASYNC_CAPTURE_SHARE_PERCENT: '100' };
    [one, two] = await Promise.all([startServiceProcess(API_MAIN, env), startServiceProcess(API_MAIN, env)]);
  });
  after(async () => {
    await Promise.all([one, two].map((api) => api?.stop(5000)));
    await bucket?.dispose();
    await shared?.dispose();
    await renderer?.stop();
    await pages?.close();
  });

  const call = async (api: ServiceProcess, method: string, route: string, body?: object, accept = 'application/json') => {
    const response = await fetch(`${api.base}${route}`, {
      method,
      headers: { 'x-api-key': key, accept, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, bytes, body: response.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(bytes.toString()) as any) : undefined };
  };
  const inBucketBytes = async (blobKey: string) => (await inBucket.getBuffer(blobKey))?.bytes;

  it('answers from one replica the asynchronous capture the other made, out of the bucket', async () => {
    const submitted = await call(one, 'POST', '/api/captures', { url: pages.url('replica-async'), site_id: siteId });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    const id = submitted.body.id as string;
    await expectEventually(async () => expect((await call(two, 'GET', `/api/captures/${id}`)).body.status).to.equal('succeeded'), 60_000);
    const image = await call(two, 'GET', `/api/captures/${id}`, undefined, 'image/png');
    expect(image.status).to.equal(200);
    expect(Buffer.compare(image.bytes, (await inBucketBytes(`captures/${id}`))!)).to.equal(0);
    expect(existsSync(path.join(shared.env.DATA_DIR!, 'blobs')), 'nothing in DATA_DIR/blobs').to.equal(false);
  });

  it("serves from one replica the monitor pictures the other's run took, out of the bucket", async () => {
    const created = await call(one, 'POST', '/api/monitors', { name: 'replicas', schedule: '0 0 1 1 *', pages: [{ name: 'home', url: pages.url('replica-monitor'), removeAds: false }] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const monitorId = created.body.id as string;
    expect((await call(one, 'POST', `/api/monitors/${monitorId}/runs`)).status).to.equal(202);
    let imageId = '';
    await expectEventually(async () => {
      const runs = (await call(two, 'GET', `/api/monitors/${monitorId}/runs`)).body as Array<{ pages: Array<{ captureImageId: string | null }> }>;
      imageId = runs[0]?.pages[0]?.captureImageId ?? '';
      expect(imageId).to.match(/^img_/);
    }, 60_000);
    const picture = await call(two, 'GET', `/api/monitors/${monitorId}/images/${imageId}`, undefined, 'image/png');
    expect(picture.status).to.equal(200);
    expect(Buffer.compare(picture.bytes, (await inBucketBytes(`monitor-images/${imageId}.png`))!)).to.equal(0);
    expect((await call(two, 'DELETE', `/api/monitors/${monitorId}`)).status).to.equal(200);
    expect(await inBucketBytes(`monitor-images/${imageId}.png`), 'deleting the monitor deletes its pictures').to.equal(undefined);
  });
});
