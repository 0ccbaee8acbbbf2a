/**
 * The real service the tests run against: test/clients/serve-for-clients.ts, started once per test
 * process (the tests run with --test-isolation=none) and stopped when the process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = path.resolve(PACKAGE_DIR, '../..');

export interface Service {
  hosted: { base: string; accountId: string; key: string; keyId: string; signingSecret: string };
  selfHosted: { base: string; apiKey: string };
  busy: { base: string };
  pages: { base: string; page: string; slow: string; hook: string; hooks: string };
}

const START_TIMEOUT_MS = 240_000;
let started: Promise<Service> | undefined;
let child: ChildProcess | undefined;

/** The Node that runs the service: VIEWFINDER_NODE, else this one (the tests need Node 22 or newer too). */
export const SERVICE_NODE = process.env.VIEWFINDER_NODE || process.execPath;

/**
 * The service's JSON line: from VIEWFINDER_TEST_SERVICE when set (a serve-for-clients.ts you keep
 * running while you work on the library), else from a serve-for-clients.ts started now.
 */
export function service(): Promise<Service> {
  const given = process.env.VIEWFINDER_TEST_SERVICE;
  if (given) started ??= Promise.resolve(JSON.parse(given) as Service);
  started ??= new Promise<Service>((resolve, reject) => {
    const proc = spawn(SERVICE_NODE, ['test/clients/serve-for-clients.ts'], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => reject(new Error(`serve-for-clients printed nothing within ${START_TIMEOUT_MS} ms:\n${stderr}`)), START_TIMEOUT_MS);
    timer.unref();
    const lines = createInterface({ input: proc.stdout! });
    lines.once('line', (line) => {
      clearTimeout(timer);
      // The service must not keep this process alive: it stops when the tests end (below), or when its stdin closes.
      proc.unref();
      for (const stream of [proc.stdin, proc.stdout, proc.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
      try {
        resolve(JSON.parse(line) as Service);
      } catch (err) {
        reject(new Error(`serve-for-clients printed ${line}: ${String(err)}`));
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve-for-clients exited with ${code}:\n${stderr}`));
    });
  });
  return started;
}

function stop(): void {
  if (child && child.exitCode === null) {
    child.stdin?.end();
    child.kill('SIGTERM');
  }
}
after(stop);
process.once('exit', stop);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stop();
    process.exit(1);
  });
}

/** The webhook deliveries the page server has received. */
export async function deliveries(svc: Service): Promise<Array<{ headers: Record<string, string | string[] | undefined>; body: string }>> {
  const answer = (await (await fetch(svc.pages.hooks)).json()) as { deliveries: Array<{ headers: Record<string, string>; body: string }> };
  return answer.deliveries;
}

/** Polls `probe` until it answers something other than undefined, for at most `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
