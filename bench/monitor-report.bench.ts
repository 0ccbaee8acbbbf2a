/**
 * What the page report costs a monitor's capture (issue #40). Every monitor run now asks for the
 * report; axe-core runs only for a page whose checks declare maxViolations. One in-process Chromium
 * (RENDER_CONCURRENCY=1), one page served on loopback (test/support/health-pages.ts's healthy page:
 * a stylesheet, a fetch, a form), captured as a monitor captures it (services/api/src/monitors/run.ts,
 * captureRequestOf), in interleaved rounds of three conditions: no report (a run before issue #40),
 * the report a page without checks gets, and the report with axe. Prints each condition's median and
 * p95 capture time and its ratio to the first; asserts nothing.
 * Run: node bench/monitor-report.bench.ts (BENCH_ROUNDS, 15 by default).
 */
import { createLogger } from '../lib/logger.ts';
import { captureRequestOf } from '../services/api/src/monitors/run.ts';
import { loadRendererConfig } from '../services/renderer/src/config.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import type { CaptureRequest } from '../services/renderer/src/renderer.ts';
import { startHealthPages } from '../test/support/health-pages.ts';
import { fmt, median, percentile } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const pages = await startHealthPages();
const logger = createLogger({ level: 'warn', name: 'bench' });
const renderer = await createChromiumRenderer(loadRendererConfig({ ...process.env, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: '1', LOG_LEVEL: 'warn' }), logger);

const page = { name: 'home', url: pages.url('/healthy'), removeAds: false };
const { report: _report, ...withoutReport } = captureRequestOf(page, null);
const conditions: Array<[string, CaptureRequest]> = [
  ['no report (before #40)', withoutReport],
  ['report, no checks', captureRequestOf(page, null)],
  ['report + axe (maxViolations)', captureRequestOf({ ...page, checks: { maxViolations: { serious: 0 } } }, null)],
];
const times = conditions.map(() => [] as number[]);

try {
  for (const [, request] of conditions) await renderer.capture(request); // warm-up
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [index, [, request]] of conditions.entries()) {
      const started = performance.now();
      await renderer.capture(request);
      times[index]!.push(performance.now() - started);
    }
  }
  const base = median(times[0]!);
  console.log(`monitor capture of one page, ${ROUNDS} interleaved rounds (ms)`);
  for (const [index, [label]] of conditions.entries()) {
    const values = times[index]!;
    console.log(`  ${label.padEnd(30)} p50 ${fmt(median(values)).padStart(7)}  p95 ${fmt(percentile(values, 95)).padStart(7)}  p50 ratio ${fmt(median(values) / base, 2)}`);
  }
} finally {
  await renderer.close();
  await pages.close();
}
