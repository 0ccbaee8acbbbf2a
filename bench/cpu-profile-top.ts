/**
 * The top of a V8 CPU profile (as `node --cpu-prof` writes it; `BENCH_CPU_PROF=DIR make bench`
 * profiles the service process): self time by function and by file, as shares of the time the
 * process was sampled, idle included, so that "the service's JavaScript took N% of its wall time"
 * reads straight off it.
 *
 *   node bench/cpu-profile-top.ts FILE.cpuprofile [--top N]
 */
import fs from 'node:fs';
import { fmt } from './stats.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 25;
const file = args.find((arg, i) => !arg.startsWith('--') && i !== topIndex + 1);
if (!file) {
  console.error('usage: node bench/cpu-profile-top.ts FILE.cpuprofile [--top N]');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;

/** Microseconds per node id, from the samples and the deltas between them. */
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = profile.endTime - profile.startTime;

/** Where a function lives, short: the project's paths from the repository root, node_modules by package. */
function place(url: string): string {
  if (!url) return '(native or V8)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return `npm:${modules[1]}`;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '').replace(/^.*?\/(services|lib|bench|test|operator)\//, '$1/');
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0;
  if (micros === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = place(url);
  const name = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  byPlace.set(where, (byPlace.get(where) ?? 0) + micros);
}

const share = (micros: number) => `${fmt((100 * micros) / total).padStart(5)}%  ${fmt(micros / 1000, 0).padStart(7)} ms`;
const print = (title: string, totals: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${share(micros)}  ${name}`);
};
console.log(`${file}: ${fmt(total / 1e6, 1)} s sampled, ${profile.samples.length} samples`);
print('Self time by function (share of the wall time sampled, idle included):', byFunction);
print('Self time by file or package:', byPlace);
