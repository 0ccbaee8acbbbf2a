/**
 * The benches' floors in their own processes, as a user would run bare puppeteer beside the service:
 * bench/support/floor-child.ts launches Chromium with the service's flags and takes captures when
 * asked, timing them itself, so the bench process's own work (its HTTP client for the service)
 * never lands inside a floor's figure.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./floor-child.ts', import.meta.url));

/** What one capture loads and shoots. */
export interface FloorShot {
  url: string;
  waitUntil?: 'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2';
  fullPage?: boolean;
}

export type FloorRequest =
  | { id: number; op: 'capture'; worker?: number; shot: FloorShot }
  | { id: number; op: 'block'; count: number; concurrency: number; shot: FloorShot }
  | { id: number; op: 'close' };

/** A request before the parent numbers it. */
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

export interface FloorReply {
  id: number;
  ready?: boolean;
  ms?: number;
  durations?: number[];
  perSecond?: number;
  error?: string;
}

export interface FloorProcess {
  pid: number;
  /** One capture on `worker`'s page (warm) or a fresh context (isolated); resolves with its duration in ms. */
  capture(shot: FloorShot, worker?: number): Promise<number>;
  /** `count` back-to-back captures on `concurrency` workers: their durations and the rate per second. */
  block(count: number, concurrency: number, shot: FloorShot): Promise<{ durations: number[]; perSecond: number }>;
  close(): Promise<void>;
}

/**
 * Starts a floor: `isolated` (a fresh context per capture, the service's promise of isolation) or
 * `warm` (a reused page per worker). `env` reaches the child's config as the service's would
 * (CHROMIUM_PATH and the like).
 */
export async function startFloorProcess(mode: 'isolated' | 'warm', options: { workers?: number; env?: Record<string, string> } = {}): Promise<FloorProcess> {
  const child: ChildProcess = fork(CHILD, [], {
    env: { ...process.env, ...options.env, FLOOR_MODE: mode, FLOOR_WORKERS: String(options.workers ?? 4) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(reply: FloorReply): void; reject(err: Error): void }>();
  let nextId = 1;
  child.on('message', (reply: FloorReply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error) waiter?.reject(new Error(`floor (${mode}): ${reply.error}`));
    else waiter?.resolve(reply);
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`floor (${mode}) exited with ${code}`));
    pending.clear();
  });
  const ask = (request: Unsent<FloorRequest>, id = nextId++) =>
    new Promise<FloorReply>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      child.send({ ...request, id });
    });
  // The child says it is ready (Chromium launched, warm pages open) with id 0.
  await new Promise<FloorReply>((resolve, reject) => {
    pending.set(0, { resolve, reject });
  });
  return {
    pid: child.pid as number,
    capture: async (shot, worker) => (await ask({ op: 'capture', shot, worker })).ms as number,
    block: async (count, concurrency, shot) => {
      const reply = await ask({ op: 'block', count, concurrency, shot });
      return { durations: reply.durations as number[], perSecond: reply.perSecond as number };
    },
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      await ask({ op: 'close' }).catch(() => undefined);
      await exited;
    },
  };
}
