/**
 * The bare-puppeteer floor in its own process, as the service runs in its own: a bench that holds
 * the service to it compares two processes, neither of which shares an event loop or a garbage
 * collector with the bench itself. The child (floor-child.ts) launches Chromium with the service's
 * flags (chromiumLaunchOptions of the config that `env` gives); each capture is a fresh browser
 * context, `goto` until `waitUntil`, a PNG screenshot at the default viewport (1280x720), the
 * context closed before capture() resolves. Calls made together run together in that browser; a
 * bench that wants one at a time awaits each. Meant to be shared by the benches.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { PuppeteerLifeCycleEvent } from 'puppeteer-core';

export interface FloorOptions {
  /** Added to the bench's environment: the config the launch flags are read from (CHROMIUM_PATH...). */
  env?: Record<string, string>;
  /** Node flags for the child, such as --cpu-prof. */
  execArgv?: string[];
}

export interface FloorCaptureOptions {
  /** The whole document (a clip beyond the viewport, as puppeteer's fullPage), cut at `maxHeight`. */
  fullPage?: boolean;
  /** Default 'load'. */
  waitUntil?: PuppeteerLifeCycleEvent;
  /** CSS pixels; default 16384, the service's FULL_PAGE_MAX_HEIGHT at the standard profile. */
  maxHeight?: number;
}

export interface FloorCapture {
  /** From before the context was created to the screenshot's bytes in hand, timed in the child. */
  ms: number;
  /** The PNG's size in pixels. */
  width: number;
  height: number;
}

export interface FloorProcess {
  capture(url: string, options?: FloorCaptureOptions): Promise<FloorCapture>;
  /** Closes Chromium and waits for the child to exit. */
  close(): Promise<void>;
}

/** What goes to the child. */
export interface FloorRequest {
  id: number;
  url: string;
  fullPage: boolean;
  waitUntil: PuppeteerLifeCycleEvent;
  maxHeight: number;
}

/** What comes back: a capture, or the error that ended it. */
export interface FloorReply extends FloorCapture {
  id: number;
  error?: string;
}

const CHILD = fileURLToPath(new URL('./floor-child.ts', import.meta.url));
const START_TIMEOUT_MS = 60_000;

export async function startFloorProcess(options: FloorOptions = {}): Promise<FloorProcess> {
  const child: ChildProcess = fork(CHILD, [], {
    env: { ...process.env, ...options.env },
    execArgv: [...process.execArgv, ...(options.execArgv ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, { resolve(capture: FloorCapture): void; reject(err: Error): void }>();
  let nextId = 0;
  const failAll = (err: Error) => {
    for (const { reject } of waiting.values()) reject(err);
    waiting.clear();
  };
  child.on('exit', (code, signal) => failAll(new Error(`the floor process exited (${code ?? signal})`)));
  child.on('message', (message: FloorReply | 'ready') => {
    if (message === 'ready') return;
    const waiter = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error) waiter?.reject(new Error(`floor capture failed: ${message.error}`));
    else waiter?.resolve({ ms: message.ms, width: message.width, height: message.height });
  });

  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the floor process did not start')), START_TIMEOUT_MS);
    child.on('message', (message) => message === 'ready' && (clearTimeout(timer), resolve()));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`the floor process exited with ${code} before it was ready`))));
  });
  await ready;

  return {
    capture(url, { fullPage = false, waitUntil = 'load', maxHeight = 16_384 } = {}) {
      const id = nextId++;
      return new Promise<FloorCapture>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        child.send({ id, url, fullPage, waitUntil, maxHeight } satisfies FloorRequest);
      });
    },
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
