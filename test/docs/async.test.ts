import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { eventually } from '../support/eventually.ts';
import { closedPort, startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';

const root = path.join(import.meta.dirname, '..', '..');
const doc = readFileSync(path.join(root, 'docs', 'async.md'), 'utf8');
const blocks = [...doc.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({ lang, code: code as string }));
const block = (lang: string, marker: string) => {
  const found = blocks.find((b) => b.lang === lang && b.code.includes(marker));
  if (!found) throw new Error(`docs/async.md has no ${lang} block with ${marker}`);
  return found.code;
};

/**
 * docs/async.md's walk-through, run as written: the bootstrap commands, the receiver, the submit and
 * the status commands. Three things differ from a reader's machine, and only these are replaced:
 * the page is a loopback fixture (no internet here), and the service and the receiver listen on
 * free ports rather than 3000 and 4000. The service is started the way `make run` starts it (main.ts).
 */
describe('docs/async.md: from a curl submit to a verified webhook, as written', function () {
  this.timeout(180_000);
  let fixtures: FixtureServer;
  let dir: string;
  let api: ServiceProcess | undefined;
  let receiver: ChildProcess | undefined;
  let receiverOutput = '';
  let substitute: (code: string) => string;

  before(async () => {
    fixtures = await startFixtureServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-async-doc-'));
    symlinkSync(path.join(root, 'bin'), path.join(dir, 'bin'));
  });
  after(async () => {
    receiver?.kill('SIGKILL');
    await api?.stop();
    await fixtures.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const bash = (code: string) => {
    const result = spawnSync('bash', ['-euo', 'pipefail', '-c', code], {
      cwd: dir,
      env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` },
      encoding: 'utf8',
    });
    expect(result.status, `${code}\n${result.stderr}`).to.equal(0);
    return result.stdout;
  };

  it('bootstraps an account, a site and a key with the CLI', () => {
    const { MONGODB_URI: _ignored, ...env } = process.env;
    const result = spawnSync('bash', ['-euo', 'pipefail', '-c', block('sh', 'accounts create')], { cwd: dir, env: { ...env, PATH: `${path.dirname(process.execPath)}:${env.PATH}` }, encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    const key = JSON.parse(readFileSync(path.join(dir, 'key.json'), 'utf8'));
    expect(key.key).to.match(/^vf_/);
    expect(key.signingSecret).to.match(/^vfs_/);
  });

  it('submits with curl, and the receiver verifies the signed webhook and saves the image; the status commands agree', async () => {
    expect(block('sh', 'make run')).to.include('MODE=hosted PRIVATE_NETWORK_ALLOWLIST=127.0.0.1');
    // The doc's service listens on 3000 and says so in its absolute URLs (PUBLIC_BASE_URL's
    // default); here it gets a free port, and the URLs it hands out name that port.
    const apiPort = await closedPort();
    api = await startServiceProcess(
      API_MAIN,
      { MODE: 'hosted', PRIVATE_NETWORK_ALLOWLIST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}` },
      { port: apiPort },
    );
    const receiverPort = await closedPort();
    substitute = (code) => code.replaceAll('https://example.com', fixtures.url('/geometry')).replaceAll('http://localhost:3000', api!.base).replaceAll('4000', String(receiverPort));

    writeFileSync(path.join(dir, 'receiver.mjs'), substitute(block('js', 'receiver.mjs')));
    const env = substitute(block('sh', 'export VIEWFINDER'));
    receiver = spawn('bash', ['-euo', 'pipefail', '-c', `${env}\nexec node receiver.mjs`], { cwd: dir, env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` } });
    receiver.stdout?.on('data', (chunk) => (receiverOutput += chunk));
    receiver.stderr?.on('data', (chunk) => (receiverOutput += chunk));
    await eventually('the receiver listens', () => receiverOutput.includes('listening on'), 20_000);

    const submitted = JSON.parse(bash(`${env}\n${substitute(block('sh', 'curl -s -X POST'))}`));
    expect(submitted).to.include({ status: 'queued' });
    await eventually('the receiver saved the image', () => receiverOutput.includes(`saved ${submitted.id}.png`), 60_000).catch(() => {
      throw new Error(`the receiver said:\n${receiverOutput}`);
    });
    expect(receiverOutput).to.include(`verified capture.succeeded for ${submitted.id}`);
    expect(receiverOutput).to.not.include('refused');
    expect(PNG.sync.read(readFileSync(path.join(dir, `${submitted.id}.png`))).width).to.equal(1280);

    const status = bash(`${env}\n${substitute(block('sh', 'ID=$('))}`);
    expect(status.trim()).to.equal('succeeded after 1 attempt(s); webhook delivered');
    expect(PNG.sync.read(readFileSync(path.join(dir, 'capture.png'))).width).to.equal(1280);
  });

  it('the receiver refuses a forged delivery', async () => {
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(receiverOutput)?.[1];
    const response = await fetch(`http://127.0.0.1:${port}/viewfinder`, {
      method: 'POST',
      headers: { 'Viewfinder-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body: '{"id":"job_forged","status":"succeeded"}',
    });
    expect(response.status).to.equal(400);
  });
});
