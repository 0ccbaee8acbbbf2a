/**
 * Sizing figures for the Helm chart's README section "Scaling": one renderer service (its own
 * process, default RENDER_CONCURRENCY unless set) fed with more captures than it has slots, on a
 * loopback fixture page. Prints captures per second per replica and Chromium's memory (PSS of the
 * whole browser process tree, so shared pages are not counted twice) at rest and under load.
 * Asserts nothing. Run: node bench/renderer-sizing.bench.ts
 */
import { readdirSync, readFileSync } from 'node:fs';
import { closedPort, startFixtureServer } from '../test/support/fixture-server.ts';
import { RENDERER_MAIN, startServiceProcess } from '../test/support/processes.ts';
import { fmt, median, percentile, runConcurrently } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);
const PROFILES = ['standard', 'retina'] as const;

/** Every descendant of `root`, read from /proc (Linux only). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process exited while we looked
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Proportional set size in MiB of the given processes, from smaps_rollup. */
function pssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      kib += Number(match?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return kib / 1024;
}

const fixtures = await startFixtureServer();
const concurrencyEnv: Record<string, string> = process.env.RENDER_CONCURRENCY ? { RENDER_CONCURRENCY: process.env.RENDER_CONCURRENCY } : {};
const service = await startServiceProcess(RENDERER_MAIN, { PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', LOG_LEVEL: 'warn', ...concurrencyEnv }, { port: await closedPort() });
try {
  const ready = (await (await fetch(`${service.base}/readyz`)).json()) as { stats: { capacity: number } };
  const capacity = ready.stats.capacity;
  const chromium = () => descendants(service.child.pid as number);
  const nodeOnly = pssMiB([service.child.pid as number]);
  const idleMiB = pssMiB(chromium());
  console.log(`Renderer sizing: one renderer service, capacity ${capacity} (RENDER_CONCURRENCY), ${SAMPLES} captures per profile, ${2 * capacity} in flight`);
  console.log(`At rest: Chromium ${fmt(idleMiB, 0)} MiB PSS over ${chromium().length} processes; the Node process ${fmt(nodeOnly, 0)} MiB\n`);
  for (const quality of PROFILES) {
    const capture = async () => {
      const response = await fetch(`${service.base}/v1/captures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: fixtures.url('/simple'), quality, fullPage: false, removeAds: false }),
      });
      if (response.status !== 200) throw new Error(`capture answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    };
    await runConcurrently(capacity * 2, capacity, capture);
    let peakMiB = 0;
    const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, pssMiB(chromium()))), 200);
    const run = await runConcurrently(SAMPLES, capacity * 2, capture);
    clearInterval(sampler);
    console.log(
      `${quality.padEnd(9)} ${fmt(run.perSecond, 2)} captures/s, median ${fmt(median(run.durations), 0)} ms, p95 ${fmt(percentile(run.durations, 95), 0)} ms; ` +
        `Chromium peak ${fmt(peakMiB, 0)} MiB PSS (${fmt((peakMiB - idleMiB) / capacity, 0)} MiB per busy slot above rest)`,
    );
  }
} finally {
  await service.stop();
  await fixtures.close();
}
