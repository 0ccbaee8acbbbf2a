import { existsSync, readFileSync } from 'node:fs';

/**
 * A test server that with-test-servers.sh builds and starts in the background on a cold cache
 * (versitygw, Jaeger: test/cluster/with-test-servers.sh, up_server): its variables are not in the
 * environment when the suite starts, but in a file that appears once the server is up, named by
 * `laterVariable` (VIEWFINDER_TEST_S3_LATER, VIEWFINDER_TEST_JAEGER_LATER). Beside it, `.failed`
 * holds the build's or the start's output when either failed.
 */
export function serverLater(laterVariable: string): string | undefined {
  return process.env[laterVariable] || undefined;
}

/** How long a leg waits for a server built in the background: longer than its coldest build seen. */
const WAIT_MS = 60 * 60_000;
const waits = new Map<string, Promise<Record<string, string>>>();

/**
 * The server's variables once it is up (waiting for its build, printing that it waits once a minute);
 * they are also set in process.env. Throws with the build's output when it failed.
 */
export function waitForServerLater(laterVariable: string, what: string): Promise<Record<string, string>> {
  const file = serverLater(laterVariable);
  if (file === undefined) return Promise.reject(new Error(`${laterVariable} is not set`));
  let wait = waits.get(file);
  if (!wait) {
    wait = poll(file, what);
    waits.set(file, wait);
  }
  return wait;
}

async function poll(file: string, what: string): Promise<Record<string, string>> {
  const started = Date.now();
  let said = 0;
  for (;;) {
    if (existsSync(file)) {
      const variables = Object.fromEntries(
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.includes('='))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      Object.assign(process.env, variables);
      return variables;
    }
    const failed = file.replace(/\.env$/, '.failed');
    if (existsSync(failed)) throw new Error(`${what} could not be built or started in the background:\n${readFileSync(failed, 'utf8').split('\n').slice(-20).join('\n')}`);
    const waited = Date.now() - started;
    if (waited > WAIT_MS) throw new Error(`${what} was still not up after ${WAIT_MS / 60_000} minutes of building in the background (${file})`);
    if (waited >= said * 60_000) {
      console.log(`      (waiting for ${what}, built in the background on a cold cache: ${Math.round(waited / 60_000)} min so far)`);
      said += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
