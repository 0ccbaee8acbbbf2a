/**
 * What the store backend costs: the embedded SQLite store against MongoDB (the server MONGODB_URI
 * names, or FerretDB started here with test/cluster/ferretdb.sh), on the same machine, interleaved.
 * One hosted API process per backend and per renderer (a real renderer service with Chromium, and a
 * stub renderer answering a 1x1 PNG at once, which leaves the API and its store as the cost):
 *
 * 1. capture latency: POST /api/screenshot one at a time, the two backends alternating capture by
 *    capture (BENCH_CAPTURES each, 40), with Chromium and with the stub;
 * 2. asynchronous throughput: BENCH_ASYNC (200) captures in batches of 100 to POST /api/captures on the stub, timed
 *    from the submit to the last job's outcome, BENCH_ROUNDS (3) rounds alternating the backends.
 *
 * Prints medians, p95 and MongoDB/SQLite ratios; asserts nothing. Run: node bench/store-backends.bench.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../test/support/processes.ts';
import { mongo, sqlite, type TestStore } from '../test/support/store-backends.ts';
import { startStubRenderer } from '../test/support/stub-renderer.ts';
import { fmt, median, percentile, sleep } from './stats.ts';

const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 40);
const ASYNC = Number(process.env.BENCH_ASYNC ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH = 100; // the most one POST /api/captures takes
const FERRETDB_SH = fileURLToPath(new URL('../test/cluster/ferretdb.sh', import.meta.url));

let ferretState: string | undefined;
let mongoUri = process.env.MONGODB_URI || undefined;
if (!mongoUri) {
  ferretState = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-bench-ferretdb-'));
  const line = execFileSync(FERRETDB_SH, ['up', ferretState], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1)!;
  mongoUri = line.replace(/^MONGODB_URI=/, '');
}

interface Leg {
  name: string;
  shared: TestStore;
  key: string;
  accountId: string;
  chromium: ServiceProcess;
  stub: ServiceProcess;
}

const fixtures = await startFixtureServer();
const stubRenderer = await startStubRenderer({ capacity: 64, delayMs: () => 0 });
const renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2' });
const legs: Leg[] = [];
try {
  for (const backend of [sqlite, mongo(mongoUri)]) {
    const shared = await backend.create();
    const account = await shared.store.createAccount({ name: 'bench' });
    const site = await shared.store.createSite({ accountId: account.id, name: 'bench', allowedDomains: [] });
    const { secret } = await shared.store.createKey({ accountId: account.id, name: 'bench', kind: 'site', siteId: site.id });
    const env = (rendererUrl: string) => ({
      MODE: 'hosted',
      ...shared.env,
      RENDERER_URL: rendererUrl,
      RATE_LIMIT_PER_MINUTE: '1000000',
      ASYNC_MAX_QUEUED_PER_ACCOUNT: String(ASYNC * 2),
      ASYNC_CAPTURE_SHARE_PERCENT: '100',
      JOB_POLL_INTERVAL_MS: '100',
    });
    legs.push({
      name: backend.name,
      shared,
      key: secret,
      accountId: account.id,
      chromium: await startServiceProcess(API_MAIN, env(renderer.base)),
      stub: await startServiceProcess(API_MAIN, env(stubRenderer.url)),
    });
  }
  const post = (api: ServiceProcess, key: string, route: string, body: object) =>
    fetch(`${api.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });

  console.log(`Store backends bench: ${legs.map((leg) => leg.name).join(' vs ')} (MongoDB at ${new URL(mongoUri).host}${ferretState ? ', FerretDB started here' : ''}), ${os.cpus().length} CPUs`);
  console.log('(a shared machine: compare the rows of one run, not runs of different days)\n');

  // 1. Latency, interleaved capture by capture; the order within a pair alternates too.
  for (const target of ['stub', 'chromium'] as const) {
    const latencies = new Map(legs.map((leg) => [leg.name, [] as number[]]));
    let n = 0;
    for (let i = -4; i < CAPTURES; i++) {
      for (const leg of i % 2 ? legs : [...legs].reverse()) {
        const t0 = performance.now();
        const response = await post(leg[target], leg.key, '/api/screenshot', { url: fixtures.url(`/simple?n=${n++}`) });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${leg.name}: /api/screenshot answered ${response.status}`);
        if (i >= 0) latencies.get(leg.name)!.push(performance.now() - t0); // the first four pairs warm up
      }
    }
    console.log(`POST /api/screenshot, one at a time, ${target === 'stub' ? 'stub renderer (the API and its store alone)' : 'real renderer service with Chromium (RENDER_CONCURRENCY=2)'}:`);
    for (const [name, values] of latencies) console.log(`  ${name.padEnd(16)} n=${values.length}  p50 ${fmt(median(values), 1).padStart(7)} ms   p95 ${fmt(percentile(values, 95), 1).padStart(7)} ms`);
    const [sqliteMs, mongoMs] = [...latencies.values()];
    console.log(`  MongoDB / SQLite: p50 ${fmt(median(mongoMs!) / median(sqliteMs!), 2)}, p95 ${fmt(percentile(mongoMs!, 95) / percentile(sqliteMs!, 95), 2)}\n`);
  }

  // 2. Asynchronous throughput on the stub renderer, rounds alternating the backends. The Chromium
  // API processes share each store's job queue: stopped first, so that only the stub's run the jobs.
  for (const leg of legs) await leg.chromium.stop();
  const throughput = new Map(legs.map((leg) => [leg.name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const leg of round % 2 ? [...legs].reverse() : legs) {
      const begin = performance.now();
      for (let start = 0; start < ASYNC; start += BATCH) {
        const captures = Array.from({ length: Math.min(BATCH, ASYNC - start) }, (_, i) => ({ url: fixtures.url(`/simple?round=${round}&i=${start + i}`) }));
        const response = await post(leg.stub, leg.key, '/api/captures', { captures });
        await response.arrayBuffer();
        if (response.status !== 202) throw new Error(`${leg.name}: /api/captures answered ${response.status}`);
      }
      while ((await leg.shared.store.countJobs({ states: ['queued', 'running'], ownerId: leg.accountId })) > 0) await sleep(20);
      throughput.get(leg.name)!.push(ASYNC / ((performance.now() - begin) / 1000));
    }
  }
  console.log(`POST /api/captures, ${ASYNC} captures in batches of ${BATCH} on the stub renderer, submit to last outcome (${ROUNDS} rounds each):`);
  for (const [name, values] of throughput) console.log(`  ${name.padEnd(16)} ${values.map((v) => fmt(v, 1)).join(', ')} captures/s; median ${fmt(median(values), 1)}`);
  const [sqliteRate, mongoRate] = [...throughput.values()];
  console.log(`  MongoDB / SQLite throughput, median: ${fmt(median(mongoRate!) / median(sqliteRate!), 2)}`);
} finally {
  for (const leg of legs) {
    await Promise.all([leg.chromium.stop(), leg.stub.stop()]);
    await leg.shared.dispose();
  }
  await renderer.stop();
  await stubRenderer.close();
  await fixtures.close();
  if (ferretState) {
    execFileSync(FERRETDB_SH, ['down', ferretState, '--wipe'], { stdio: 'inherit' });
    rmSync(ferretState, { recursive: true, force: true });
  }
}
