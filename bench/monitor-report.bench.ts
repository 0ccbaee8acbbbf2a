/**
 * What the page report costs a monitor run's capture (issue #40): the capture a monitor page makes
 * (services/api/src/monitors/run.ts, captureRequestOf: PNG, motion frozen, removeAds) of real pages
 * (the Bootstrap album example and Python's documentation index, served on loopback), in four
 * interleaved variants on one pool, so that every variant sees the same machine:
 *
 *   none     no report (a capture as before #40)
 *   report   the report every run asks for: status, console, failed requests, vitals, weight, timeline
 *   checks   the report a page with checks asks for (the text its text check reads), and the checks judged
 *   axe      the same with maxViolations declared, which runs axe-core
 *
 * Prints the median and p95 per variant and each one's ratio to `none` (the goal: a run with its
 * checks, axe aside, within 1.2x of one without). Asserts nothing.
 * Run: node bench/monitor-report.bench.ts (BENCH_SAMPLES per variant and page, 12 by default).
 */
import { createLogger } from '../lib/logger.ts';
import { loadApiConfig } from '../services/api/src/config.ts';
import { evaluateChecks, type Checks } from '../services/api/src/monitors/checks.ts';
import type { MonitorPage } from '../lib/store/monitors.ts';
import { captureRequestOf } from '../services/api/src/monitors/run.ts';
import { createChromiumRenderer } from '../services/renderer/src/pool.ts';
import type { CaptureRequest } from '../services/renderer/src/renderer.ts';
import { startDocCorpusServer } from '../test/support/doc-corpus.ts';
import { fmt, median, percentile } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 12);
const WARMUP = 2;

const corpus = await startDocCorpusServer();
const config = loadApiConfig({ ...process.env, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', RENDER_CONCURRENCY: '1', LOG_LEVEL: 'warn' });
const renderer = await createChromiumRenderer(config.renderer, createLogger({ level: 'warn' }));

const pages = [
  { name: 'album', url: corpus.url('/bootstrap/examples/album/') },
  { name: 'python-docs', url: corpus.url('/python/index.html') },
];
// What a page with checks declares; `maxViolations` aside, since axe is its own variant.
const checks: Checks = { status: [200], maxConsoleErrors: 0, maxFailedRequests: 0, webVitals: { LCP: 'good', CLS: 'good' }, maxLoadTime: 10_000, text: [{ contains: 'Python' }] };
/** Each variant's request, from the page as run.ts makes it (captureRequestOf asks for the report its checks need). */
const variants: Record<string, (page: MonitorPage) => CaptureRequest> = {
  none: (page) => {
    const { report: _report, ...request } = captureRequestOf(page, null);
    return request;
  },
  report: (page) => captureRequestOf(page, null),
  checks: (page) => captureRequestOf({ ...page, checks }, null),
  axe: (page) => captureRequestOf({ ...page, checks: { ...checks, maxViolations: { serious: 0 } } }, null),
};

try {
  const times = new Map<string, number[]>();
  for (const page of pages) {
    for (let n = 0; n < WARMUP + SAMPLES; n++) {
      // Interleaved, and in a rotating order, so that no variant always follows another.
      const names = Object.keys(variants);
      const order = names.map((_, i) => names[(i + n) % names.length]!);
      for (const variant of order) {
        const started = performance.now();
        const result = await renderer.capture(variants[variant]!({ name: page.name, url: page.url }));
        if (variant === 'checks' || variant === 'axe') evaluateChecks(result.report!, checks);
        const ms = performance.now() - started;
        if (variant !== 'none' && !result.report) throw new Error(`${variant}: no report`);
        if (n >= WARMUP) times.set(`${page.name} ${variant}`, [...(times.get(`${page.name} ${variant}`) ?? []), ms]);
      }
    }
  }
  console.log(`What the report costs a monitor page's capture (PNG, freezeMotion, removeAds; one pool, ${SAMPLES} interleaved samples per variant)`);
  for (const page of pages) {
    const floor = median(times.get(`${page.name} none`)!);
    for (const variant of Object.keys(variants)) {
      const values = times.get(`${page.name} ${variant}`)!;
      console.log(
        `  ${page.name.padEnd(12)} ${variant.padEnd(7)} median ${fmt(median(values)).padStart(7)} ms   p95 ${fmt(percentile(values, 95)).padStart(7)} ms   x${fmt(median(values) / floor, 2)} of none`,
      );
    }
  }
  console.log('  goal: checks (axe aside) within 1.2x of none');
} finally {
  await renderer.close();
  await corpus.close();
}
