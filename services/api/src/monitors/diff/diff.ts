/**
 * Compares two PNG pictures of a page in a worker thread (diff-worker.ts, compare.ts), so that the
 * API's event loop never stalls on decoding, pixelmatch or encoding: a 1280x5000 pair takes seconds
 * of CPU. One worker per comparison, and at most `MAX_CONCURRENT_DIFFS` at a time per process; the
 * others wait their turn.
 */
import { Worker } from 'node:worker_threads';
import type { CompareOptions, Region } from './compare.ts';

export type { CompareOptions, Region } from './compare.ts';

export interface DiffTask {
  baseline: Uint8Array;
  current: Uint8Array;
  options: CompareOptions;
}

export interface DiffResult {
  changedPixels: number;
  totalPixels: number;
  /** changedPixels / totalPixels, 0..1. */
  ratio: number;
  /** Bounding boxes of the changed areas in CSS pixels, largest first. */
  regions: Region[];
  /** Size of the diff picture: the area either picture covers, in device pixels. */
  width: number;
  height: number;
  /** Changed pixels in red over the faded baseline, ignored areas in pale blue. */
  diffPng: Uint8Array;
}

export type DiffReply = ({ ok: true } & DiffResult) | { ok: false; error: string };

export const MAX_CONCURRENT_DIFFS = 1;
const WORKER_URL = new URL('./diff-worker.ts', import.meta.url);

let running = 0;
const waiting: Array<() => void> = [];

async function turn(): Promise<() => void> {
  if (running >= MAX_CONCURRENT_DIFFS) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  return () => {
    running -= 1;
    waiting.shift()?.();
  };
}

/** Rejects with an Error naming the picture when one is not a readable PNG. */
export async function diffPngs(baseline: Uint8Array, current: Uint8Array, options: CompareOptions): Promise<DiffResult> {
  const release = await turn();
  try {
    return await inWorker({ baseline, current, options });
  } finally {
    release();
  }
}

function inWorker(task: DiffTask): Promise<DiffResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL);
    let settled = false;
    worker.once('message', (reply: DiffReply) => {
      settled = true;
      if (reply.ok) {
        const { ok: _ok, ...result } = reply;
        resolve(result);
      } else {
        reject(new Error(reply.error));
      }
      void worker.terminate();
    });
    worker.once('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the diff worker exited with code ${code} before answering`));
    });
    worker.postMessage(task);
  });
}
