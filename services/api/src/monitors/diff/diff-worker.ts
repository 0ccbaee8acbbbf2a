/**
 * The worker thread of diff.ts: decodes both PNGs, compares them (compare.ts) and encodes the diff
 * picture, so that none of this CPU work runs on the API's event loop.
 */
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { PNG } from 'pngjs';
import { compareImages, type CompareOptions } from './compare.ts';
import type { DiffReply, DiffTask } from './diff.ts';

/** The lowest priority a process or thread can have on Linux. */
const BACKGROUND_NICE = 19;

function decode(png: Uint8Array, which: string) {
  try {
    const image = PNG.sync.read(Buffer.from(png.buffer, png.byteOffset, png.byteLength));
    return { width: image.width, height: image.height, data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength) };
  } catch (err) {
    throw new Error(`the ${which} picture is not a readable PNG: ${(err as Error).message}`);
  }
}

function run(task: DiffTask): DiffReply {
  const options: CompareOptions = task.options;
  const comparison = compareImages(decode(task.baseline, 'baseline'), decode(task.current, 'current'), options);
  const picture = new PNG({ width: comparison.diff.width, height: comparison.diff.height });
  picture.data = Buffer.from(comparison.diff.data.buffer, comparison.diff.data.byteOffset, comparison.diff.data.byteLength);
  // A copy with an ArrayBuffer of its own, which postMessage can transfer (pngjs's may be pooled).
  // No per-row filter search: the diff picture is flat grey and red, and this halves the encoding time.
  const diffPng = PNG.sync.write(picture, { colorType: 2, filterType: 0, deflateLevel: 3 });
  const { diff, ...figures } = comparison;
  return { ok: true, ...figures, width: diff.width, height: diff.height, diffPng: new Uint8Array(diffPng) };
}

/**
 * A comparison is background work: this thread gives the CPU to the API's event loop and to
 * anything else on the machine first. On Linux a thread's nice value is its own (setpriority on
 * the calling thread), so the API's main thread keeps its priority. Raising nice needs no privilege.
 */
function yieldCpu(): void {
  try {
    os.setPriority(BACKGROUND_NICE);
  } catch {
    // A platform that refuses (or has no nice values) compares at normal priority.
  }
}

yieldCpu();

parentPort?.once('message', (task: DiffTask) => {
  let reply: DiffReply;
  try {
    reply = run(task);
  } catch (err) {
    reply = { ok: false, error: (err as Error).message };
  }
  parentPort?.postMessage(reply, reply.ok ? [reply.diffPng.buffer as ArrayBuffer] : []);
});
