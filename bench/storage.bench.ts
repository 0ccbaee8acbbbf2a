/**
 * make bench-storage (issue #43): what object storage costs.
 *
 * 1. Capture-to-object against capture-to-JSON: the same capture through POST /screenshot (the API
 *    in-process, in-process Chromium), answered as JSON with the image, or written to a storage
 *    destination on the test object store (versitygw) and answered with its location; the two
 *    alternate capture by capture (BENCH_CAPTURES each, 30), so that both see the same machine.
 * 2. The service's blob store implementations side by side (lib/blobs): the local directory, GridFS
 *    (on the MongoDB server with-test-servers.sh starts, FerretDB) and S3 (versitygw): put, get and
 *    delete of a capture-sized blob (BENCH_BLOB_KB, 200 KiB; BENCH_BLOB_OPS, 50, each), the three
 *    interleaved operation by operation.
 *
 * Prints medians and p95; asserts nothing. Needs the test servers:
 *   VIEWFINDER_CLUSTER=none test/cluster/with-test-servers.sh node bench/storage.bench.ts
 * A leg whose server is missing says so and is left out.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { BlobStore } from '../lib/blobs/blob-store.ts';
import { openDirectoryBlobStore } from '../lib/blobs/directory-blob-store.ts';
import { openGridFsBlobStore, type GridFsBlobStore } from '../lib/blobs/gridfs-blob-store.ts';
import { openS3BlobStore } from '../lib/blobs/s3-blob-store.ts';
import { createLogger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { selfHostedStorageDelivery } from '../services/api/src/storage/configured-destinations.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { serverLater, waitForServerLater } from '../test/support/deferred-server.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { freshBucket, type TestS3 } from '../test/support/object-store.ts';
import { fmt, median, percentile } from './stats.ts';

const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 30);
const BLOB_BYTES = Number(process.env.BENCH_BLOB_KB ?? 200) * 1024;
const BLOB_OPS = Number(process.env.BENCH_BLOB_OPS ?? 50);

/** The object store with-test-servers.sh started (waiting for it when it is still being built), or undefined. */
async function testS3(): Promise<TestS3 | undefined> {
  if (!process.env.VIEWFINDER_TEST_S3_ENDPOINT && serverLater('VIEWFINDER_TEST_S3_LATER')) await waitForServerLater('VIEWFINDER_TEST_S3_LATER', 'the test object store (versitygw)');
  const env = process.env;
  if (!env.VIEWFINDER_TEST_S3_ENDPOINT || !env.VIEWFINDER_TEST_S3_ACCESS_KEY_ID || !env.VIEWFINDER_TEST_S3_SECRET_ACCESS_KEY) return undefined;
  return {
    endpoint: env.VIEWFINDER_TEST_S3_ENDPOINT,
    region: env.VIEWFINDER_TEST_S3_REGION || 'us-east-1',
    accessKeyId: env.VIEWFINDER_TEST_S3_ACCESS_KEY_ID,
    secretAccessKey: env.VIEWFINDER_TEST_S3_SECRET_ACCESS_KEY,
  };
}

const row = (name: string, values: number[]) =>
  `  ${name.padEnd(24)} n=${String(values.length).padEnd(4)} median ${fmt(median(values)).padStart(8)} ms   p95 ${fmt(percentile(values, 95)).padStart(8)} ms`;

const s3 = await testS3();
if (!s3) {
  console.error('No object store: VIEWFINDER_TEST_S3_* are not set. Run: VIEWFINDER_CLUSTER=none test/cluster/with-test-servers.sh node bench/storage.bench.ts');
  process.exit(1);
}
const mongoUri = process.env.VIEWFINDER_TEST_MONGODB_URI || undefined;
const cleanups: Array<() => Promise<void>> = [];

try {
  await captureToObject(s3);
  await blobStores(s3);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => console.error(`cleanup: ${(err as Error).message}`));
}

async function captureToObject(store: TestS3): Promise<void> {
  const fixtures = await startFixtureServer();
  cleanups.push(() => fixtures.close());
  const bucket = await freshBucket(store);
  cleanups.push(() => bucket.dispose());
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-storage-bench-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const destinations = [
    {
      name: 'bench',
      endpoint: store.endpoint,
      bucket: bucket.options.bucket,
      region: store.region,
      pathStyle: true,
      keyTemplate: 'bench/{id}.{format}',
      credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    },
  ];
  const config = loadApiConfig({
    ...process.env,
    MODE: 'self-hosted',
    PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8',
    STORAGE_ENDPOINT_ALLOWLIST: new URL(store.endpoint).hostname,
    STORAGE_DESTINATIONS: JSON.stringify(destinations),
    RENDER_CONCURRENCY: '1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  });
  const logger = createLogger({ level: 'warn', name: 'bench' });
  const renderer = await createChromiumRenderer(config.renderer, logger);
  cleanups.push(() => renderer.close());
  const storage = selfHostedStorageDelivery(config.storage)!;
  const app = createApp({ config, renderer, logger, storage }).callback();

  const timed = async (body: Record<string, unknown>) => {
    const started = performance.now();
    const response = await request(app).post('/screenshot').set('Content-Type', 'application/json').send(body);
    const ms = performance.now() - started;
    if (response.status !== 200) throw new Error(`capture failed: ${response.status} ${JSON.stringify(response.body)}`);
    return { ms, bytes: Number(response.body.fileSize) };
  };
  const page = fixtures.url('/simple');
  await timed({ url: page });
  await timed({ url: page, storage: { destination: 'bench' } }); // warm-ups: lazy set-up, the first connection

  const toJson: number[] = [];
  const toObject: number[] = [];
  let bytes = 0;
  for (let n = 0; n < CAPTURES; n++) {
    toJson.push((await timed({ url: page })).ms);
    const stored = await timed({ url: page, storage: { destination: 'bench' } });
    toObject.push(stored.ms);
    bytes = stored.bytes;
  }
  console.log(`Capture to JSON vs capture to object (POST /screenshot of /simple, standard png of ${fmt(bytes / 1024)} KiB, in-process Chromium, versitygw on loopback, alternating)`);
  console.log(row('JSON (image in answer)', toJson));
  console.log(row('object (storage)', toObject));
  console.log(`  object - JSON: median ${fmt(median(toObject) - median(toJson))} ms, p95 ${fmt(percentile(toObject, 95) - percentile(toJson, 95))} ms; ratio of medians ${fmt(median(toObject) / median(toJson), 3)}`);
}

async function blobStores(store: TestS3): Promise<void> {
  const stores: Array<{ name: string; blobs: BlobStore }> = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-blob-bench-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const directory = await openDirectoryBlobStore({ dir });
  cleanups.push(() => directory.close());
  stores.push({ name: 'directory', blobs: directory });
  if (mongoUri) {
    const gridfs: GridFsBlobStore = await openGridFsBlobStore({ uri: mongoUri, dbName: `viewfinder_blob_bench_${randomBytes(4).toString('hex')}` });
    cleanups.push(async () => {
      await gridfs.dropDatabase();
      await gridfs.close();
    });
    stores.push({ name: 'gridfs (FerretDB)', blobs: gridfs });
  } else {
    console.log('  (GridFS left out: VIEWFINDER_TEST_MONGODB_URI is not set)');
  }
  const bucket = await freshBucket(store);
  cleanups.push(() => bucket.dispose());
  const s3Blobs = await openS3BlobStore(bucket.options);
  cleanups.push(() => s3Blobs.close());
  stores.push({ name: 's3 (versitygw)', blobs: s3Blobs });

  const body = randomBytes(BLOB_BYTES);
  const times = new Map(stores.map(({ name }) => [name, { put: [] as number[], get: [] as number[], delete: [] as number[] }]));
  const time = async (into: number[], work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    into.push(performance.now() - started);
  };
  for (const { blobs } of stores) await blobs.put('warm/up.png', body, { contentType: 'image/png' });
  for (let n = 0; n < BLOB_OPS; n++) {
    for (const { name, blobs } of stores) {
      const t = times.get(name)!;
      const key = `bench/${n}.png`;
      await time(t.put, () => blobs.put(key, body, { contentType: 'image/png' }));
      await time(t.get, async () => {
        const read = await blobs.getBuffer(key);
        if (read?.bytes.length !== body.length) throw new Error(`${name}: read back ${read?.bytes.length} bytes of ${body.length}`);
      });
      await time(t.delete, () => blobs.delete(key));
    }
  }
  console.log(`Blob stores side by side (put, get, delete of ${fmt(BLOB_BYTES / 1024, 0)} KiB, one at a time, interleaved)`);
  for (const op of ['put', 'get', 'delete'] as const) {
    for (const { name } of stores) console.log(row(`${op} ${name}`, times.get(name)![op]));
  }
}
