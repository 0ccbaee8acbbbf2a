import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { closedPort, startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { decodeDataUri, TEST_ENV } from '../../../support/harness.ts';
import { READY_TIMEOUT_MS } from '../../../support/processes.ts';
import { viewfinder } from '../../../support/viewfinder-cli.ts';

const MAIN = fileURLToPath(new URL('../../../../services/api/src/main.ts', import.meta.url));

describe('the service process in MODE=hosted, on the embedded store', () => {
  let fixtures: FixtureServer;
  let dataDir: string;
  let child: ChildProcess | undefined;
  let output = '';

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-main-'));
  });
  afterEach(() => {
    child?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves captures for an account the CLI bootstraps while the service runs, and shuts down cleanly', async () => {
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const { MONGODB_URI: _ignored, ...env } = process.env;
    child = spawn(process.execPath, [MAIN], {
      env: { ...env, ...TEST_ENV, MODE: 'hosted', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    for (const deadline = Date.now() + READY_TIMEOUT_MS; ; ) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not become ready: ${output}`);
      if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(output).to.match(/"store":"sqlite in [^"]+".*Opened the store/);

    // A second process writes into the DATA_DIR the service has open.
    const bootstrap = await viewfinder(dataDir, ['accounts', 'create', 'Acme']);
    expect(bootstrap.code, bootstrap.stderr).to.equal(0);
    const accountId = bootstrap.json.account.id as string;
    const site = await viewfinder(dataDir, ['sites', 'create', '-a', accountId, '-d', '127.0.0.1']);
    const siteKey = await viewfinder(dataDir, ['keys', 'create', '-a', accountId, '-n', 'widget', '-s', site.json.id, '--restrict-domains']);

    const capture = (key: string, body: object) =>
      fetch(`${base}/api/screenshot`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
    const allowed = await capture(siteKey.json.key, { url: fixtures.url('/geometry') });
    expect(allowed.status).to.equal(200);
    const result = await allowed.json();
    expect(decodeDataUri(result.image).rgb(640, 360)).to.deep.equal([0, 255, 0]);

    // The CLI changes the domains; the running service applies them on the next request.
    await viewfinder(dataDir, ['sites', 'set-domains', site.json.id, '-a', accountId, '-d', 'example.com']);
    expect((await capture(siteKey.json.key, { url: fixtures.url('/geometry') })).status).to.equal(403);

    // The CLI regenerates the key; the running service refuses the old one on the next request.
    await viewfinder(dataDir, ['keys', 'regenerate', siteKey.json.id, '-a', accountId]);
    expect((await capture(siteKey.json.key, { url: fixtures.url('/geometry') })).status).to.equal(401);

    const usage = await viewfinder(dataDir, ['usage', '-a', accountId]);
    expect(usage.json.sites[site.json.id]).to.deep.equal({ captures: 1, failures: 0, bytes: result.fileSize });

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code, output).to.equal(0);
    expect(output).to.match(/Shut down cleanly/);
    expect(output).to.not.include(bootstrap.json.key.key);
    expect(output).to.not.include(siteKey.json.key);
  });
});
