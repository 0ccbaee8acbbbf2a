/**
 * The benches' floors in their own processes, as a user would run bare puppeteer beside the service:
 * a bench that holds the service (its own process) to a floor compares two processes, neither of
 * which shares an event loop or a garbage collector with the bench itself. The child
 * (floor-child.ts) launches Chromium with the service's flags (chromiumLaunchOptions of the config
 * that `env` gives) and takes captures when asked, timing them itself, next to the browser.
 *
 * - `isolated` (the default): a fresh browser context and page per capture, closed before the
 *   answer goes back; the service promises the same isolation, so this is the floor it is held to.
 * - `warm`: one page per worker, opened at start and reused, each in its own context (so in its own
 *   window: headless Chromium renders only a window's active tab).
 *
 * Captures asked for together run together in that browser; a bench that wants one at a time awaits
 * each, or asks for a block at concurrency 1.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { PuppeteerLifeCycleEvent } from 'puppeteer-core';

const CHILD = fileURLToPath(new URL('./floor-child.ts', import.meta.url));
const START_TIMEOUT_MS = 60_000;

export interface FloorOptions {
  mode?: 'isolated' | 'warm';
  /** Warm pages to open (warm mode); the highest concurrency a block will ask for. Default 4. */
  workers?: number;
  /** Added to the bench's environment: the config the launch flags are read from (CHROMIUM_PATH...). */
  env?: Record<string, string>;
  /** Node flags for the child, such as --cpu-prof. */
  execArgv?: string[];
}

/** What one capture loads and shoots. */
export interface FloorShot {
  url: string;
  /** Default 'load'. */
  waitUntil?: PuppeteerLifeCycleEvent;
  /** The whole document (a clip beyond the viewport, as puppeteer's fullPage), cut at `maxHeight`. */
  fullPage?: boolean;
  /** CSS pixels; default 16384, the service's FULL_PAGE_MAX_HEIGHT at the standard profile. */
  maxHeight?: number;
}

export interface FloorCapture {
  /** From before the context was created (isolated) or `goto` (warm) to the screenshot's bytes in hand, timed in the child. */
  ms: number;
  /** The PNG's size in pixels. */
  width: number;
  height: number;
}

export type FloorRequest =
  | { id: number; op: 'capture'; worker: number; shot: FloorShot }
  | { id: number; op: 'block'; count: number; concurrency: number; shot: FloorShot };

export interface FloorReply {
  id: number;
  capture?: FloorCapture;
  block?: { durations: number[]; perSecond: number };
  error?: string;
}

export interface FloorProcess {
  pid: number;
  /** One capture, on `worker`'s page when warm. */
  capture(shot: FloorShot, worker?: number): Promise<FloorCapture>;
  /** `count` back-to-back captures on `concurrency` workers: their durations and the rate per second. */
  block(count: number, concurrency: number, shot: FloorShot): Promise<{ durations: number[]; perSecond: number }>;
  /** Closes Chromium and waits for the child to exit. */
  close(): Promise<void>;
}

/** A request before the parent numbers it. */
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

export async function startFloorProcess(options: FloorOptions = {}): Promise<FloorProcess> {
  const mode = options.mode ?? 'isolated';
  const child: ChildProcess = fork(CHILD, [], {
    env: { ...process.env, ...options.env, FLOOR_MODE: mode, FLOOR_WORKERS: String(options.workers ?? 4) },
    execArgv: [...process.execArgv, ...(options.execArgv ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, { resolve(reply: FloorReply): void; reject(err: Error): void }>();
  let nextId = 0;
  child.on('exit', (code, signal) => {
    for (const { reject } of waiting.values()) reject(new Error(`the ${mode} floor process exited (${code ?? signal})`));
    waiting.clear();
  });
  child.on('message', (message: FloorReply | 'ready') => {
    if (message === 'ready') return;
    const waiter = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error) waiter?.reject(new Error(`${mode} floor: ${message.error}`));
    else waiter?.resolve(message);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${mode} floor process did not start`)), START_TIMEOUT_MS);
    child.on('message', (message) => message === 'ready' && (clearTimeout(timer), resolve()));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`the ${mode} floor process exited with ${code} before it was ready`))));
  });
  const ask = (request: Unsent<FloorRequest>) =>
    new Promise<FloorReply>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      child.send({ ...request, id });
    });

  return {
    pid: child.pid as number,
    capture: async (shot, worker = 0) => (await ask({ op: 'capture', worker, shot })).capture as FloorCapture,
    block: async (count, concurrency, shot) => (await ask({ op: 'block', count, concurrency, shot })).block as { durations: number[]; perSecond: number },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      // The child closes its browser once the channel goes away.
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
