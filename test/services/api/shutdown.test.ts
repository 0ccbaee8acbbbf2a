import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { closedPort, startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { TEST_ENV } from '../../support/harness.ts';

const MAIN = fileURLToPath(new URL('../../../services/api/src/main.ts', import.meta.url));

async function waitUntilReady(base: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`the service exited early with ${child.exitCode}`);
    const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the service did not become ready');
}

describe('the service process (services/api/src/main.ts)', () => {
  let fixtures: FixtureServer;
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());

  it('on SIGTERM finishes the capture in flight, refuses new connections, closes Chromium and exits 0', async () => {
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, ...TEST_ENV, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    try {
      await waitUntilReady(base, child);
      const inFlight = fetch(`${base}/screenshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: fixtures.url('/simple'), wait: 2000 }),
      });
      await new Promise((resolve) => setTimeout(resolve, 700));
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');

      const response = await inFlight;
      expect(response.status, output).to.equal(200);
      expect((await response.json()).success).to.equal(true);
      expect(code, output).to.equal(0);
      expect(output).to.match(/Shut down cleanly/);
      expect(await fetch(`${base}/healthz`).then(() => 'answered', () => 'refused')).to.equal('refused');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('exits 2 with a clear message on invalid configuration', async () => {
    const child = spawn(process.execPath, [MAIN], { env: { ...process.env, RENDER_CONCURRENCY: 'lots' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    expect(code).to.equal(2);
    expect(stderr).to.match(/invalid configuration: RENDER_CONCURRENCY must be an integer/);
  });
});
