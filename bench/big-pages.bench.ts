/**
 * make bench: long pages against a bare capture at `load`. Node's fs.html (131,000 px,
 * 15,600 elements) and Python's asyncio-task.html (20,000 px), from the machine's own docs, served
 * with their assets on loopback. Two processes, one capture at a time, interleaved:
 * - the service as `make run` starts it (the API with its in-process renderer), POST /screenshot
 *   with `{url}` (default options: smart wait, removeAds) and with `{url, fullPage: true}`;
 * - the floor: bare puppeteer-core in its own process (bench/support/floor-process.ts), Chromium
 *   with the same flags, a fresh context per capture, `goto` at `load`, `screenshot()`, or a clip
 *   of the whole document cut at the service's cap (16,384 px) for the full-page row.
 * The target is the developers' guide's: service / floor <= 1.15 on every row. Heights show that
 * both captured as much of the page. BENCH_BASELINE_API=<path to another tree's
 * services/api/src/main.ts> adds that service as a third subject in the same rotation (before and
 * after a change in one run), with the share of pixels the two services' last images have in common.
 * Prints figures and ratios; asserts nothing.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { readPngSize } from '../services/renderer/src/capture/png.ts';
import { DOC_ROOTS, startDocCorpusServer } from '../test/support/doc-corpus.ts';
import { pixelSimilarity } from '../test/support/pixels.ts';
import { API_MAIN, type ServiceProcess } from '../test/support/processes.ts';
import { startServiceAsRun } from './support/service-as-run.ts';
import { fmt, median } from './stats.ts';
import { startFloorProcess } from './support/floor-process.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 15);
/** A full-page capture of these pages takes seconds: fewer samples keep the bench to a few minutes. */
const FULL_PAGE_SAMPLES = Number(process.env.BENCH_SAMPLES ?? 9);
const WARMUP = 2;
const TARGET = 1.15;
/** The service's default FULL_PAGE_MAX_HEIGHT (the test harness's environment lowers it). */
const FULL_PAGE_MAX_HEIGHT = 16_384;

const PAGES = [
  { name: 'Node fs.html', path: '/node/fs.html' },
  { name: 'Python asyncio-task.html', path: '/python/library/asyncio-task.html' },
];
const MODES = [
  { name: 'default', fullPage: false },
  { name: 'fullPage', fullPage: true },
];
/** BENCH_ROWS=<regular expression>: only the rows whose "page mode" it matches (e.g. "fs.html default"). */
const ROWS = new RegExp(process.env.BENCH_ROWS ?? '');

function pageFile(pagePath: string): string {
  const [, mount, rest] = /^\/(node|python)\/(.*)$/.exec(pagePath) ?? [];
  return path.join(DOC_ROOTS[mount as 'node' | 'python'], rest as string);
}

interface Shot {
  ms: number;
  height: number;
  waitMs?: number;
  truncated?: boolean;
  png?: Buffer;
}

interface Subject {
  name: string;
  capture(url: string, fullPage: boolean): Promise<Shot>;
}

const missing = PAGES.map((page) => pageFile(page.path)).filter((file) => !existsSync(file));
if (missing.length > 0) {
  console.error(`big-pages bench: ${missing.join(', ')} missing: Debian's nodejs and python3-doc ship them (make test-deps installs python3-doc)`);
  process.exit(1);
}
const corpus = await startDocCorpusServer();
const services: ServiceProcess[] = [];

async function startService(main: string): Promise<ServiceProcess> {
  const service = await startServiceAsRun({ LOG_LEVEL: 'warn', FULL_PAGE_MAX_HEIGHT: String(FULL_PAGE_MAX_HEIGHT) }, main);
  services.push(service);
  return service;
}

function serviceSubject(name: string, service: ServiceProcess): Subject {
  return {
    name,
    async capture(url, fullPage) {
      const started = performance.now();
      const response = await fetch(`${service.base}/screenshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(fullPage ? { url, fullPage } : { url }),
      });
      const json = (await response.json()) as { image?: string; waitMs?: number; truncated?: boolean; error?: string };
      const ms = performance.now() - started;
      if (!json.image) throw new Error(`${name}: capture of ${url} answered ${response.status}: ${json.error}`);
      const png = Buffer.from(json.image.split(',')[1] as string, 'base64');
      return { ms, height: readPngSize(png).height, waitMs: json.waitMs, truncated: json.truncated, png };
    },
  };
}

const floor = await startFloorProcess({ env: { PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8' } });
const floorSubject: Subject = {
  name: 'floor',
  capture: (url, fullPage) => floor.capture({ url, fullPage, waitUntil: 'load', maxHeight: FULL_PAGE_MAX_HEIGHT }),
};
const service = serviceSubject('service', await startService(API_MAIN));
const baselineMain = process.env.BENCH_BASELINE_API;
const baseline = baselineMain ? serviceSubject('baseline', await startService(baselineMain)) : undefined;
const subjects = [floorSubject, service, ...(baseline ? [baseline] : [])];

console.log(
  `Long pages against bare puppeteer (goto at load + screenshot, own process, fresh context each): ${SAMPLES} captures per row and subject (${FULL_PAGE_SAMPLES} full page) after ${WARMUP} warm-up, one of each in turn`,
);
if (baseline) console.log(`baseline: ${baselineMain}`);
const columns = ['floor ms', 'service ms', 'service/floor', ...(baseline ? ['baseline ms', 'baseline/floor', 'same pixels'] : []), 'wait ms', 'floor px', 'service px'];
console.log('page'.padEnd(28) + 'mode'.padEnd(10) + columns.map((column) => column.padStart(15)).join(''));

let worst = 0;
for (const page of PAGES) {
  const url = corpus.url(page.path);
  for (const mode of MODES) {
    if (!ROWS.test(`${page.name} ${mode.name}`)) continue;
    const shots = new Map<Subject, Shot[]>(subjects.map((subject) => [subject, []]));
    const samples = mode.fullPage ? FULL_PAGE_SAMPLES : SAMPLES;
    for (let round = 0; round < WARMUP + samples; round++) {
      // Rotating who goes first, so that neither always follows the other's clean-up.
      for (let turn = 0; turn < subjects.length; turn++) {
        const subject = subjects[(round + turn) % subjects.length] as Subject;
        const shot = await subject.capture(url, mode.fullPage);
        if (round >= WARMUP) shots.get(subject)?.push(shot);
      }
    }
    const ms = (subject: Subject) => median((shots.get(subject) ?? []).map((shot) => shot.ms));
    const last = (subject: Subject) => (shots.get(subject) ?? []).at(-1) as Shot;
    const ratio = ms(service) / ms(floorSubject);
    worst = Math.max(worst, ratio);
    const cells = [fmt(ms(floorSubject), 0), fmt(ms(service), 0), fmt(ratio, 2)];
    if (baseline) {
      const similarity = pixelSimilarity(PNG.sync.read(last(service).png as Buffer), PNG.sync.read(last(baseline).png as Buffer));
      cells.push(fmt(ms(baseline), 0), fmt(ms(baseline) / ms(floorSubject), 2), fmt(similarity, 4));
    }
    const waits = (shots.get(service) ?? []).map((shot) => shot.waitMs ?? 0);
    cells.push(fmt(median(waits), 0), String(last(floorSubject).height), `${last(service).height}${last(service).truncated ? ' cut' : ''}`);
    console.log(page.name.padEnd(28) + mode.name.padEnd(10) + cells.map((cell) => cell.padStart(15)).join(''));
  }
}
console.log('');
console.log(`worst service/floor: ${fmt(worst, 2)} (target <= ${TARGET}); ms are medians, the service's from POST to the decoded JSON, the floor's from a new context to the PNG's bytes`);
console.log('(wait ms: the median waitMs the service reported; px: the height of the last image; "cut": the service reported it cut at FULL_PAGE_MAX_HEIGHT)');

await floor.close();
await Promise.all(services.map((running) => running.stop()));
await corpus.close();
