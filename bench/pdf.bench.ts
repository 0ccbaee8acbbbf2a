/**
 * What a PDF costs against a PNG of the same page: POST /screenshot through the API (in-process
 * Chromium, default options, one capture at a time), PNG and PDF interleaved, the order swapped
 * every round, so that the machine's load falls on both alike. Two pages: the fixture /simple (one
 * A4 page) and a page of Debian's Python documentation (three A4 pages, `make test-deps` installs
 * it). Prints medians, p95s, the ratio of medians and the median of the paired differences;
 * asserts nothing.
 */
import request from 'supertest';
import { createLogger } from '../lib/logger.ts';
import { createApp } from '../services/api/src/app.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import { startDocCorpusServer } from '../test/support/doc-corpus.ts';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import { fmt, median, percentile } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const WARMUP = 3;

const fixtures = await startFixtureServer();
const corpus = await startDocCorpusServer();
const config = loadApiConfig({ ...process.env, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: '1', LOG_LEVEL: 'warn' });
const logger = createLogger({ level: 'warn', name: 'bench' });
const renderer = await createChromiumRenderer(config.renderer, logger);
const app = createApp({ config, renderer, logger }).callback();

async function timed(body: Record<string, unknown>): Promise<{ ms: number; fileSize: number }> {
  const started = performance.now();
  const response = await request(app).post('/screenshot').set('Content-Type', 'application/json').send(body);
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`capture failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { ms, fileSize: response.body.fileSize as number };
}

async function compare(name: string, url: string): Promise<void> {
  const subjects = { png: { url }, pdf: { url, format: 'pdf' } } as const;
  for (let i = 0; i < WARMUP; i++) for (const body of Object.values(subjects)) await timed(body);
  const times = { png: [] as number[], pdf: [] as number[] };
  const sizes = { png: 0, pdf: 0 };
  const differences: number[] = [];
  for (let round = 0; round < SAMPLES; round++) {
    const order = round % 2 === 0 ? (['png', 'pdf'] as const) : (['pdf', 'png'] as const);
    const ms = { png: 0, pdf: 0 };
    for (const format of order) {
      const result = await timed(subjects[format]);
      ms[format] = result.ms;
      sizes[format] = result.fileSize;
      times[format].push(result.ms);
    }
    differences.push(ms.pdf - ms.png);
  }
  console.log(`${name} (${url.replace(/^http:\/\/[^/]+/, '')})`);
  for (const format of ['png', 'pdf'] as const) {
    console.log(
      `  ${format}  n=${times[format].length}  median ${fmt(median(times[format])).padStart(7)} ms  p95 ${fmt(percentile(times[format], 95)).padStart(7)} ms  ${sizes[format]} bytes`,
    );
  }
  console.log(
    `  pdf/png median ratio ${fmt(median(times.pdf) / median(times.png), 2)}; paired difference pdf - png: median ${fmt(median(differences))} ms, p95 ${fmt(percentile(differences, 95))} ms`,
  );
}

try {
  console.log(`PDF against PNG of the same page: POST /screenshot, default options, one at a time, ${SAMPLES} interleaved rounds`);
  await compare('one-page PDF', fixtures.url('/simple'));
  await compare('three-page PDF', corpus.url('/python/tutorial/interpreter.html'));
} finally {
  await renderer.close();
  await Promise.all([fixtures.close(), corpus.close()]);
}
