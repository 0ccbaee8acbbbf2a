import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PNG } from 'pngjs';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { RENDERER_MAIN, startServiceProcess } from '../../support/processes.ts';

describe('the renderer service process (services/renderer/src/main.ts)', () => {
  let fixtures: FixtureServer;
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());

  it('captures over HTTP, and on SIGTERM finishes the capture in flight, closes Chromium and exits 0', async () => {
    const renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '1', RENDERER_TOKEN: 'process-test-token' });
    try {
      expect(renderer.output()).to.match(/"service":"renderer","concurrency":1,"auth":"token","port":\d+,"msg":"Listening"/);
      const inFlight = fetch(`${renderer.base}/v1/captures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer process-test-token' },
        body: JSON.stringify({ url: fixtures.url('/simple'), quality: 'standard', fullPage: false, removeAds: false, wait: 2000 }),
      });
      await new Promise((resolve) => setTimeout(resolve, 700));
      const code = await renderer.stop(15_000, 'SIGTERM');

      const response = await inFlight;
      expect(response.status, renderer.output()).to.equal(200);
      const png = PNG.sync.read(Buffer.from(await response.arrayBuffer()));
      expect([png.width, png.height]).to.deep.equal([1280, 720]);
      expect(code, renderer.output()).to.equal(0);
      expect(renderer.output()).to.match(/Closed the browser pool/);
      expect(renderer.output()).to.match(/Shut down cleanly/);
      expect(renderer.output()).to.not.include('process-test-token');
    } finally {
      renderer.child.kill('SIGKILL');
    }
  });

  it('exits 2 with a clear message on invalid configuration', async () => {
    const child = spawn(process.execPath, [RENDERER_MAIN], { env: { ...process.env, RENDERER_PORT: 'http' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    expect(code).to.equal(2);
    expect(stderr).to.match(/invalid configuration: RENDERER_PORT must be an integer/);
  });
});
