/**
 * A fleet of stub renderers in a process of its own (test/support/stub-renderer.ts: the real
 * renderer server over a renderer that waits), so that the cluster simulation measures the API's
 * CPU, not the stubs'. Prints {"urls": [...]} once listening, then answers one JSON line per command
 * on stdin:
 *   stats     how evenly busy slots were spread since the last stats (sampled every 100 ms)
 *   kill N    drops the first N live renderers at once, connections and all, like lost nodes
 * Env: FLEET_SIZE (100), FLEET_CAPACITY (10), FLEET_MIN_MS (500), FLEET_MAX_MS (3000).
 */
import { createInterface } from 'node:readline';
import { startStubRenderer, type StubRendererService } from '../../test/support/stub-renderer.ts';

const size = Number(process.env.FLEET_SIZE ?? 100);
const capacity = Number(process.env.FLEET_CAPACITY ?? 10);
const minMs = Number(process.env.FLEET_MIN_MS ?? 500);
const maxMs = Number(process.env.FLEET_MAX_MS ?? 3000);

const fleet: StubRendererService[] = [];
for (let i = 0; i < size; i++) fleet.push(await startStubRenderer({ capacity, queueLimit: capacity * 4, delayMs: () => minMs + Math.random() * (maxMs - minMs) }));
let live = [...fleet];

interface Spread {
  samples: number;
  sumMean: number;
  sumStd: number;
  sumRange: number;
  maxBusy: number;
  queuedWhileFree: number;
}
const fresh = (): Spread => ({ samples: 0, sumMean: 0, sumStd: 0, sumRange: 0, maxBusy: 0, queuedWhileFree: 0 });
let spread = fresh();
setInterval(() => {
  const stats = live.map((stub) => stub.renderer.stats());
  const busy = stats.map((s) => s.inFlight + s.queued);
  const mean = busy.reduce((a, b) => a + b, 0) / busy.length;
  if (mean === 0) return;
  const std = Math.sqrt(busy.reduce((a, b) => a + (b - mean) ** 2, 0) / busy.length);
  spread.samples += 1;
  spread.sumMean += mean;
  spread.sumStd += std;
  spread.sumRange += Math.max(...busy) - Math.min(...busy);
  spread.maxBusy = Math.max(spread.maxBusy, ...busy);
  // A capture waiting in one renderer's queue while another has a free slot: what balancing avoids.
  if (stats.some((s) => s.queued > 0) && stats.some((s) => s.inFlight < s.capacity)) spread.queuedWhileFree += 1;
}, 100).unref();

process.stdout.write(`${JSON.stringify({ urls: fleet.map((stub) => stub.url) })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const [command, arg] = line.trim().split(/\s+/);
  if (command === 'stats') {
    const s = spread;
    spread = fresh();
    const n = Math.max(1, s.samples);
    process.stdout.write(
      `${JSON.stringify({ samples: s.samples, meanBusy: s.sumMean / n, meanStd: s.sumStd / n, meanRange: s.sumRange / n, maxBusy: s.maxBusy, queuedWhileFreeShare: s.queuedWhileFree / n, capacity })}\n`,
    );
  } else if (command === 'kill') {
    const victims = live.slice(0, Number(arg));
    live = live.slice(victims.length);
    const inFlight = victims.reduce((sum, stub) => sum + stub.renderer.stats().inFlight + stub.renderer.stats().queued, 0);
    await Promise.all(victims.map((stub) => stub.close()));
    process.stdout.write(`${JSON.stringify({ killed: victims.length, inFlight })}\n`);
  }
}
process.exit(0);
