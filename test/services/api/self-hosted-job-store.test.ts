import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closedPort } from '../../support/fixture-server.ts';
import { API_MAIN } from '../../support/processes.ts';

/**
 * Self-hosted mode's store for asynchronous captures, at start: MONGODB_URI means the replicas share
 * their captures, so a MongoDB the process cannot reach stops it (Kubernetes restarts it until it
 * can) rather than leaving it to answer 503 where the other replicas answer 202.
 */
describe('the self-hosted API process and its job store at start', function () {
  this.timeout(60_000);

  it('exits 1, saying it failed to start, when MONGODB_URI names a MongoDB that does not answer', async () => {
    const [mongoPort, rendererPort, port] = await Promise.all([closedPort(), closedPort(), closedPort()]);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-self-hosted-'));
    try {
      const child = spawn(process.execPath, [API_MAIN], {
        env: {
          ...process.env,
          MODE: 'self-hosted',
          PORT: String(port),
          DATA_DIR: dataDir,
          MONGODB_URI: `mongodb://127.0.0.1:${mongoPort}/viewfinder`,
          RENDERER_URL: `http://127.0.0.1:${rendererPort}`,
          LOG_LEVEL: 'silent',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk) => (stderr += chunk));
      const [code] = await once(child, 'exit');
      expect(code, stderr).to.equal(1);
      expect(stderr).to.match(/viewfinder: failed to start:.*(ECONNREFUSED|Server selection timed out)/s);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
