import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { closedPort } from '../support/fixture-server.ts';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';

const root = path.join(import.meta.dirname, '..', '..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const tryIt = readme.slice(readme.indexOf('## Try it'), readme.indexOf('\n## ', readme.indexOf('## Try it') + 1));
const tryItBlock = [...tryIt.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, code]) => code as string).find((code) => code.includes('/readyz'));
const readyzLine = tryItBlock?.split('\n').find((line) => line.includes('/readyz'));

/** Runs `code` in bash without blocking this process, which serves what the code calls. */
const bash = (code: string, cwd = root) =>
  new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    const env = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` };
    execFile('bash', ['-euo', 'pipefail', '-c', code], { cwd, env, encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });

/**
 * README.md's "Try it", run as written but for the ports (a free one for the service's 3000 and the
 * page's 8080): it prints what the README says it prints, and nothing more (issue 44).
 */
describe("README.md's Try it, as written", function () {
  this.timeout(180_000);

  it('has the block that waits for /readyz', () => {
    expect(readyzLine, 'a line of the Try it block that waits for /readyz').to.be.a('string');
  });

  it('the readiness wait prints only the ready body, not the 503s of a service still starting', async () => {
    let calls = 0;
    const starting = http.createServer((_req, res) => {
      calls += 1;
      const ready = calls > 2;
      res.writeHead(ready ? 200 : 503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: ready ? 'ready' : 'starting' }));
    });
    await new Promise<void>((resolve) => starting.listen(0, '127.0.0.1', resolve));
    try {
      const result = await bash(readyzLine!.replaceAll('localhost:3000', `127.0.0.1:${(starting.address() as AddressInfo).port}`));
      expect(result.status, result.stderr).to.equal(0);
      expect(calls).to.equal(3);
      expect(result.stdout).to.equal('{"status":"ready"}\n');
    } finally {
      await new Promise<void>((resolve) => starting.close(() => resolve()));
    }
  });

  describe('against the service', () => {
    let api: ServiceProcess;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-readme-'));
      api = await startServiceProcess(API_MAIN, { PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8', DATA_DIR: dir });
    });
    after(async () => {
      await api?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('prints {"status":"ready"}, then the start of the answer, and writes hello.png, 1280×720', async () => {
      const pagePort = await closedPort();
      // The page server runs in the background, as in the README; `kill %1` is the README's way to stop it.
      const code = `${tryItBlock!.replaceAll('localhost:3000', `127.0.0.1:${api.port}`).replaceAll('8080', String(pagePort))}kill %1\n`;
      const result = await bash(code, dir);
      expect(result.status, result.stderr).to.equal(0);
      const [ready, answer, ...rest] = result.stdout.split('\n');
      expect(ready).to.equal('{"status":"ready"}');
      expect(answer).to.match(/^\{"success":true,"image":"data:image\/png;base64,iVBORw0KGgo/);
      expect(rest).to.deep.equal(['']);
      const png = PNG.sync.read(readFileSync(path.join(dir, 'hello.png')));
      expect([png.width, png.height]).to.deep.equal([1280, 720]);
    });
  });
});
