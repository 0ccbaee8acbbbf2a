/**
 * make bench-tracing: what tracing costs a capture (docs/operations.md, "Tracing"), in one run on the
 * same fixture page: three self-hosted services as `make run` starts them (their own processes, the
 * in-process Chromium pool), one with tracing off (no OTEL_* variable), one on at the default sampler
 * (parentbased_always_on: every capture traced), one on at a ratio (parentbased_traceidratio,
 * BENCH_TRACING_RATIO, default 0.1), both exporting to a real Jaeger (test/cluster/jaeger.sh, started
 * and stopped here) at the SDK's default batch delay. The machine may be loaded by other work, so the
 * comparison is interleaved: at c=1 one capture per subject in turn (BENCH_SAMPLES rounds), then
 * throughput at c=2 in alternating blocks. CPU time per capture, of the service process alone and
 * with its Chromium, hardly moves with other load: the steadiest figures. Prints figures and ratios
 * against tracing off, and how many traces Jaeger received from each; asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFixtureServer } from '../test/support/fixture-server.ts';
import type { ServiceProcess } from '../test/support/processes.ts';
import { startServiceAsRun } from './support/service-as-run.ts';
import { cpuMs } from './support/process-cpu.ts';
import { fmt, median, percentile, runConcurrently } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const RATIO = process.env.BENCH_TRACING_RATIO ?? '0.1';
const WARMUP = 5;
const BLOCKS = 3;
const JAEGER = fileURLToPath(new URL('../test/cluster/jaeger.sh', import.meta.url));

const jaegerState = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-bench-jaeger-'));
const up = spawnSync(JAEGER, ['up', jaegerState], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const jaegerEnv = Object.fromEntries(up.stdout.trim().split('\n').filter((line) => line.startsWith('VIEWFINDER_TEST_')).map((line) => line.split('=') as [string, string]));
const otlp = jaegerEnv.VIEWFINDER_TEST_OTLP_ENDPOINT;
const query = jaegerEnv.VIEWFINDER_TEST_JAEGER_QUERY;
if (up.status !== 0 || !otlp || !query) throw new Error(`jaeger.sh up failed (${up.status}): ${up.stdout}`);

const fixtures = await startFixtureServer();
const request = JSON.stringify({ url: fixtures.url('/simple') });

interface Subject {
  name: string;
  serviceName?: string;
  service: ServiceProcess;
  latencies: number[];
  perSecond: number[];
  cpu: { ms: number; treeMs: number; captures: number };
}

const tag = Math.random().toString(16).slice(2, 8);
const definitions: { name: string; env: Record<string, string>; serviceName?: string }[] = [
  { name: 'tracing off', env: {} },
  { name: 'on, parentbased_always_on', env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_SERVICE_NAME: `bench-always-${tag}` }, serviceName: `bench-always-${tag}` },
  {
    name: `on, parentbased_traceidratio ${RATIO}`,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_SERVICE_NAME: `bench-ratio-${tag}`, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: RATIO },
    serviceName: `bench-ratio-${tag}`,
  },
];
const subjects: Subject[] = [];
try {
  for (const definition of definitions) {
    subjects.push({ ...definition, service: await startServiceAsRun(definition.env), latencies: [], perSecond: [], cpu: { ms: 0, treeMs: 0, captures: 0 } });
  }
  const once = async (subject: Subject) => {
    const t0 = performance.now();
    const response = await fetch(`${subject.service.base}/screenshot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: request });
    if (response.status !== 200) throw new Error(`${subject.name}: capture answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    return performance.now() - t0;
  };
  /** Runs `work` on `subject`, adding the CPU time of the service process (and with its Chromium) to its account. */
  const counted = async <T>(subject: Subject, captures: number, work: () => Promise<T>): Promise<T> => {
    const pid = subject.service.child.pid as number;
    const before = { ms: cpuMs(pid), treeMs: cpuMs(pid, { tree: true }) };
    const result = await work();
    subject.cpu.ms += cpuMs(pid) - before.ms;
    subject.cpu.treeMs += cpuMs(pid, { tree: true }) - before.treeMs;
    subject.cpu.captures += captures;
    return result;
  };

  for (let i = 0; i < WARMUP; i++) for (const subject of subjects) await once(subject);
  console.log(`Tracing off vs on, ${SAMPLES} interleaved captures at c=1 per subject, then ${BLOCKS} blocks of ${SAMPLES} at c=2 each, in turn; Jaeger at ${otlp}.\n`);
  for (let round = 0; round < SAMPLES; round++) {
    // The order rotates, so that no subject always follows the same one.
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[(round + k) % subjects.length]!;
      subject.latencies.push(await counted(subject, 1, () => once(subject)));
    }
  }
  for (let block = 0; block < BLOCKS; block++) {
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[(block + k) % subjects.length]!;
      const { perSecond } = await counted(subject, SAMPLES, () => runConcurrently(SAMPLES, 2, async () => void (await once(subject))));
      subject.perSecond.push(perSecond);
    }
  }

  const off = subjects[0]!;
  const figures = subjects.map((subject) => ({
    subject,
    p50: median(subject.latencies),
    p95: percentile(subject.latencies, 95),
    perSecond: median(subject.perSecond),
    cpuPerCapture: subject.cpu.ms / subject.cpu.captures,
    treePerCapture: subject.cpu.treeMs / subject.cpu.captures,
  }));
  const base = figures[0]!;
  const ratio = (value: number, of: number) => `${fmt(value / of, 2)}x`;
  console.log('subject                                  p50 ms   p95 ms   c=2 /s   API CPU ms/capture   with Chromium   vs off: p50, c=2 /s, API CPU');
  for (const figure of figures) {
    console.log(
      `${figure.subject.name.padEnd(40)} ${fmt(figure.p50).padStart(6)}   ${fmt(figure.p95).padStart(6)}   ${fmt(figure.perSecond, 2).padStart(6)}   ${fmt(figure.cpuPerCapture).padStart(18)}   ${fmt(figure.treePerCapture).padStart(13)}   ` +
        (figure.subject === off ? '-' : `${ratio(figure.p50, base.p50)}, ${ratio(figure.perSecond, base.perSecond)}, ${ratio(figure.cpuPerCapture, base.cpuPerCapture)}`),
    );
  }
  // What Jaeger received (after the SDK's batch delay, 5 s by default).
  await new Promise((resolve) => setTimeout(resolve, 7000));
  const captures = SAMPLES + WARMUP + BLOCKS * SAMPLES;
  for (const subject of subjects.filter((candidate) => candidate.serviceName)) {
    const url = new URL('/api/traces', query);
    url.searchParams.set('service', subject.serviceName!);
    url.searchParams.set('operation', 'POST /screenshot');
    url.searchParams.set('limit', '100000');
    url.searchParams.set('lookback', '1h');
    const traces = ((await (await fetch(url)).json()) as { data: unknown[] | null }).data ?? [];
    console.log(`Jaeger holds ${traces.length} traces of ${captures} captures from "${subject.name}"`);
  }
} finally {
  await Promise.all(subjects.map((subject) => subject.service.stop()));
  await fixtures.close();
  spawnSync(JAEGER, ['down', jaegerState, '--wipe'], { stdio: 'inherit' });
}
