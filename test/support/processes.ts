import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { TEST_ENV } from './harness.ts';

export const API_MAIN = fileURLToPath(new URL('../../services/api/src/main.ts', import.meta.url));
export const RENDERER_MAIN = fileURLToPath(new URL('../../services/renderer/src/main.ts', import.meta.url));

/** A service started as its own process on an ephemeral loopback port, with its output collected. */
export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  base: string;
  /** Everything the process wrote so far, stdout and stderr. */
  output(): string;
  /**
   * `signal` (SIGINT unless told), then SIGKILL if it has not exited after `graceMs`; resolves with
   * the exit code. SIGINT shuts down as SIGTERM does but without the drain grace (DRAIN_GRACE_MS,
   * 5 s), which only clients still holding keep-alive sockets need: a test of the drain sends SIGTERM.
   */
  stop(graceMs?: number, signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `main` with PORT/RENDERER_PORT 0 and waits for its "Listening" log line, which carries the
 * port the kernel chose (or listens on `options.port`), then for its /readyz to answer 200.
 */
export async function startServiceProcess(main: string, env: Record<string, string> = {}, options: { port?: number; startTimeoutMs?: number } = {}): Promise<ServiceProcess> {
  const deadline = performance.now() + (options.startTimeoutMs ?? READY_TIMEOUT_MS);
  // With a port chosen by the caller, the service may log below info: readiness alone is awaited.
  const port = String(options.port ?? 0);
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, ...TEST_ENV, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: port, RENDERER_PORT: port, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const stop = async (graceMs = 15_000, signal: NodeJS.Signals = 'SIGINT') => {
    // A process killed by a signal has signalCode set and exitCode null: it has exited too.
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const [code] = await exited;
    clearTimeout(timer);
    return code as number | null;
  };
  try {
    const listening = options.port ?? (await waitForListening(child, () => output, deadline));
    const base = `http://127.0.0.1:${listening}`;
    await waitForReady(base, child, () => output, deadline + 30_000);
    return { child, port: listening, base, output: () => output, stop };
  } catch (err) {
    await stop(1000);
    throw err;
  }
}

async function waitForListening(child: ChildProcess, output: () => string, deadline: number): Promise<number> {
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited early with ${child.exitCode}:\n${output()}`);
    const port = /"port":(\d+),"msg":"Listening"/.exec(output())?.[1];
    if (port) return Number(port);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the service did not log "Listening":\n${output()}`);
}

/**
 * How long a child service or server may take to become ready, for waits that have no deadline of
 * their own. Generous on purpose: on a loaded 2-core machine a Node service with Chromium can take
 * far longer to start than on a quiet one, and a readiness wait is not a speed test (make bench
 * measures start-up time).
 */
export const READY_TIMEOUT_MS = 90_000;

async function waitForReady(base: string, child: ChildProcess, output: () => string, deadline: number): Promise<void> {
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited early with ${child.exitCode}:\n${output()}`);
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the service did not become ready:\n${output()}`);
}
