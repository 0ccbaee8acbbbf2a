/**
 * make bench, part 2: default options over a corpus of varied pages. For each page it prints the
 * latency of captures with default options (smart wait) and their completeness: the share of
 * pixels equal to a ground truth captured after a long fixed wait. Beside it, the reference
 * strategy of sleeping a fixed 1500 ms after load. Prints figures; asserts nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import { createLogger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { pixelSimilarity } from '../test/support/pixels.ts';
import { fmt, median, percentile } from './stats.ts';

const RUNS = Number(process.env.BENCH_CORPUS_RUNS ?? 5);
const GROUND_TRUTH_WAIT_MS = 6000;
const REFERENCE_SLEEP_MS = 1500;

const CORPUS: { name: string; path: string; fullPage?: boolean }[] = [
  { name: 'static', path: '/simple' },
  { name: 'slow web font (800 ms)', path: '/slow-font?delay=800' },
  { name: 'data at 2.2 s', path: '/data?delay=2200' },
  { name: 'single-page app', path: '/spa' },
  { name: 'image-heavy', path: '/images' },
  { name: 'lazy images, full page', path: '/lazy', fullPage: true },
  { name: 'late paint (700 ms)', path: '/late-paint?after=700' },
  { name: 'CSS fade-in', path: '/fade-in' },
  { name: 'long document, full page', path: '/long-document', fullPage: true },
  { name: 'late iframe', path: '/iframe' },
  { name: 'client-side redirect', path: '/client-redirect' },
  { name: 'fixed header + 100vh hero, full page', path: '/sticky-hero', fullPage: true },
];

const fixtures = await startFixtureServer();
const config = loadApiConfig({ ...process.env, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: '2' });
const logger = createLogger({ level: 'warn' });
const renderer = await createChromiumRenderer(config.renderer, logger);
const server = http.createServer({ keepAliveTimeout: 65_000 }, createApp({ config, renderer, logger }).callback());
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/screenshot`;

async function capture(body: Record<string, unknown>): Promise<{ ms: number; png: PNG }> {
  const started = performance.now();
  const response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await response.json()) as { image?: string; error?: string };
  const ms = performance.now() - started;
  if (!json.image) throw new Error(`capture of ${String(body.url)} answered ${response.status}: ${json.error}`);
  return { ms, png: PNG.sync.read(Buffer.from(json.image.split(',')[1] as string, 'base64')) };
}

console.log(`Viewfinder corpus bench: ${CORPUS.length} pages, ${RUNS} captures each with default options (removeAds:false)`);
console.log(`completeness = share of pixels equal to a capture after a fixed ${GROUND_TRUTH_WAIT_MS} ms wait\n`);
const header = ['page', 'median ms', 'p95 ms', 'min compl.', `sleep ${REFERENCE_SLEEP_MS}: ms`, 'compl.'];
console.log(header[0]!.padEnd(40) + header.slice(1).map((h) => h.padStart(13)).join(''));

const allLatencies: number[] = [];
let worstCompleteness = 1;
let referenceMisses = 0;
for (const page of CORPUS) {
  const body = { url: fixtures.url(page.path), fullPage: page.fullPage ?? false, removeAds: false };
  const truth = await capture({ ...body, wait: GROUND_TRUTH_WAIT_MS });
  const latencies: number[] = [];
  let completeness = 1;
  for (let run = 0; run < RUNS; run++) {
    const { ms, png } = await capture(body);
    latencies.push(ms);
    completeness = Math.min(completeness, pixelSimilarity(png, truth.png));
  }
  const reference = await capture({ ...body, wait: REFERENCE_SLEEP_MS });
  const referenceCompleteness = pixelSimilarity(reference.png, truth.png);
  if (referenceCompleteness < 0.99) referenceMisses += 1;
  allLatencies.push(...latencies);
  worstCompleteness = Math.min(worstCompleteness, completeness);
  console.log(
    page.name.padEnd(40) +
      [fmt(median(latencies), 0), fmt(percentile(latencies, 95), 0), fmt(completeness, 4), fmt(reference.ms, 0), fmt(referenceCompleteness, 4)]
        .map((cell) => cell.padStart(13))
        .join(''),
  );
}
console.log('');
console.log(`all pages: median ${fmt(median(allLatencies), 0)} ms, p95 ${fmt(percentile(allLatencies, 95), 0)} ms (target: median <= 600 ms)`);
console.log(`worst completeness on any page: ${fmt(worstCompleteness, 4)} (target >= 0.99)`);
console.log(`reference (sleep ${REFERENCE_SLEEP_MS} ms): pages below 0.99 completeness: ${referenceMisses} of ${CORPUS.length}`);

server.close();
await renderer.close();
await fixtures.close();
