/**
 * What object storage costs (docs/storage.md), on the same machine, interleaved:
 *
 * 1. Capture to object against capture to JSON: one hosted API process with a real renderer
 *    service (Chromium), POST /api/screenshot one at a time, alternating a capture answered with its
 *    image in JSON and one written to a destination on versitygw (BENCH_CAPTURES pairs, 40), with and
 *    without a presigned URL; the order within a pair alternates too.
 * 2. The service's own blob stores side by side: put then read back a capture-sized blob
 *    (BENCH_BLOB_KB, 200 KB) on the directory, GridFS (FerretDB) and S3 (versitygw) implementations,
 *    BENCH_BLOBS rounds (100) alternating the stores.
 *
 * versitygw and FerretDB are started here from the project's cached builds (test/cluster/*.sh; a
 * first run builds them, minutes). Prints medians, p95 and ratios; asserts nothing.
 * Run: make bench-storage
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BlobStore } from '../lib/blobs/blob-store.ts';
import { openDirectoryBlobStore } from '../lib/blobs/directory-blob-store.ts';
import { openGridFsBlobStore } from '../lib/blobs/gridfs-blob-store.ts';
import { createS3Bucket, deleteS3Bucket, openS3BlobStore, type S3BlobStoreOptions } from '../lib/blobs/s3-blob-store.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess } from '../test/support/processes.ts';
import { sqlite } from '../test/support/store-backends.ts';
import { fmt, median, percentile } from './stats.ts';

const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 40);
const BLOBS = Number(process.env.BENCH_BLOBS ?? 100);
const BLOB_BYTES = Number(process.env.BENCH_BLOB_KB ?? 200) * 1024;
const CLUSTER = fileURLToPath(new URL('../test/cluster/', import.meta.url));

/** Starts a test server script (`NAME.sh up STATE`) and answers its KEY=value lines. */
function upServer(script: string, state: string): Record<string, string> {
  const output = execFileSync(`${CLUSTER}${script}`, ['up', state], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return Object.fromEntries(output.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
}

const states: Array<[string, string]> = [];
const cleanups: Array<() => Promise<unknown>> = [];
try {
  const s3State = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-bench-versitygw-'));
  states.push(['versitygw.sh', s3State]);
  const s3 = upServer('versitygw.sh', s3State);
  const ferretState = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-bench-ferretdb-'));
  states.push(['ferretdb.sh', ferretState]);
  const mongoUri = upServer('ferretdb.sh', ferretState).MONGODB_URI!;

  const bucketOptions: S3BlobStoreOptions = {
    endpoint: new URL(s3.S3_ENDPOINT!),
    bucket: `viewfinder-bench-${randomBytes(4).toString('hex')}`,
    region: s3.S3_REGION!,
    pathStyle: true,
    credentials: { accessKeyId: s3.S3_ACCESS_KEY_ID!, secretAccessKey: s3.S3_SECRET_ACCESS_KEY! },
  };
  await createS3Bucket(bucketOptions);
  cleanups.push(() => deleteS3Bucket(bucketOptions));

  console.log(`Storage bench: versitygw at ${bucketOptions.endpoint.host}, FerretDB at ${new URL(mongoUri).host}, ${os.cpus().length} CPUs`);
  console.log('(a shared machine: compare the rows of one run, not runs of different days)\n');

  // 1. Capture to object against capture to JSON.
  const fixtures = await startFixtureServer();
  cleanups.push(() => fixtures.close());
  const renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2' });
  cleanups.push(() => renderer.stop());
  const shared = await sqlite.create();
  cleanups.push(() => shared.dispose());
  const account = await shared.store.createAccount({ name: 'bench' });
  const site = await shared.store.createSite({ accountId: account.id, name: 'bench', allowedDomains: ['127.0.0.1'] });
  const { secret: key } = await shared.store.createKey({ accountId: account.id, name: 'admin', kind: 'full' });
  const api = await startServiceProcess(API_MAIN, {
    MODE: 'hosted',
    ...shared.env,
    RENDERER_URL: renderer.base,
    RATE_LIMIT_PER_MINUTE: '1000000',
    STORAGE_ENDPOINT_ALLOWLIST: bucketOptions.endpoint.hostname,
  });
  cleanups.push(() => api.stop());
  const post = async (route: string, body: object) => {
    const response = await fetch(`${api.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${route} answered ${response.status}: ${text}`);
    return text;
  };
  await post('/api/destinations', {
    name: 'bench',
    endpoint: bucketOptions.endpoint.origin,
    bucket: bucketOptions.bucket,
    region: bucketOptions.region,
    pathStyle: true,
    keyTemplate: 'bench/{id}.{format}',
    credentials: bucketOptions.credentials,
  });
  const legs = [
    { name: 'image in JSON', body: {} },
    { name: 'to object', body: { storage: { destination: 'bench' } } },
    { name: 'to object + presign', body: { storage: { destination: 'bench', presign: 3600 } } },
  ];
  const latencies = new Map(legs.map((leg) => [leg.name, [] as number[]]));
  let n = 0;
  for (let i = -4; i < CAPTURES; i++) {
    for (const leg of i % 2 ? legs : [...legs].reverse()) {
      const t0 = performance.now();
      await post('/api/screenshot', { url: fixtures.url(`/simple?n=${n++}`), site_id: site.id, ...leg.body });
      if (i >= 0) latencies.get(leg.name)!.push(performance.now() - t0); // the first four rounds warm up
    }
  }
  console.log('POST /api/screenshot, one at a time, a real renderer service with Chromium (RENDER_CONCURRENCY=2):');
  const jsonMs = latencies.get('image in JSON')!;
  for (const [name, values] of latencies) {
    const ratio = name === 'image in JSON' ? '' : `   / JSON: p50 ${fmt(median(values) / median(jsonMs), 2)}, p95 ${fmt(percentile(values, 95) / percentile(jsonMs, 95), 2)}`;
    console.log(`  ${name.padEnd(20)} n=${values.length}  p50 ${fmt(median(values), 1).padStart(7)} ms   p95 ${fmt(percentile(values, 95), 1).padStart(7)} ms${ratio}`);
  }

  // 2. The blob stores side by side.
  const blobDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-bench-blobs-'));
  cleanups.push(async () => rmSync(blobDir, { recursive: true, force: true }));
  const stores: Array<{ name: string; store: BlobStore }> = [
    { name: 'directory', store: await openDirectoryBlobStore({ dir: blobDir }) },
    { name: 'gridfs (FerretDB)', store: await openGridFsBlobStore({ uri: mongoUri, bucketName: 'bench' }) },
    { name: 's3 (versitygw)', store: await openS3BlobStore(bucketOptions) },
  ];
  for (const { store } of stores) cleanups.push(() => store.close());
  const body = randomBytes(BLOB_BYTES);
  const times = new Map(stores.map(({ name }) => [name, { put: [] as number[], get: [] as number[] }]));
  for (let i = -5; i < BLOBS; i++) {
    for (const { name, store } of i % 2 ? stores : [...stores].reverse()) {
      const blobKey = `bench/blob-${i + 5}.png`;
      const t0 = performance.now();
      await store.put(blobKey, body, { contentType: 'image/png' });
      const t1 = performance.now();
      const read = await store.getBuffer(blobKey);
      const t2 = performance.now();
      if (read?.bytes.length !== body.length) throw new Error(`${name}: read back ${read?.bytes.length} bytes of ${body.length}`);
      if (i >= 0) {
        times.get(name)!.put.push(t1 - t0);
        times.get(name)!.get.push(t2 - t1);
      }
    }
  }
  console.log(`\nBlob stores, put then read back ${fmt(BLOB_BYTES / 1024, 0)} KB, ${BLOBS} rounds alternating the stores:`);
  const directory = times.get('directory')!;
  for (const [name, { put, get }] of times) {
    console.log(
      `  ${name.padEnd(18)} put p50 ${fmt(median(put), 2).padStart(7)} ms p95 ${fmt(percentile(put, 95), 2).padStart(7)} ms   get p50 ${fmt(median(get), 2).padStart(7)} ms p95 ${fmt(percentile(get, 95), 2).padStart(7)} ms` +
        (name === 'directory' ? '' : `   / directory: put ${fmt(median(put) / median(directory.put), 1)}x, get ${fmt(median(get) / median(directory.get), 1)}x`),
    );
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(`cleanup: ${String(error)}`));
  for (const [script, state] of states) {
    execFileSync(`${CLUSTER}${script}`, ['down', state, '--wipe'], { stdio: 'inherit' });
    rmSync(state, { recursive: true, force: true });
  }
}
