import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startFixtureServer, type FixturePages } from '../../support/fixture-server.ts';
import { startRenderer, testConfig } from '../../support/harness.ts';
import { browserPidsUnder, dirsUnder, uniqueTempRoot } from '../../support/chromium-processes.ts';
import { eventually } from '../../support/eventually.ts';
import type { CaptureRequest, Renderer } from '../../../services/renderer/src/renderer.ts';

/** Crash, hang and recycling with real Chromium, and the per-browser directories that must not outlive it. */
describe('renderer recovery (real Chromium)', function () {
  this.timeout(90_000);
  let fixtures: FixturePages;
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());

  const job = (pathname: string): CaptureRequest => ({ url: fixtures.url(pathname), quality: 'standard', fullPage: false, removeAds: false });
  const rendererOn = (root: string, env: Record<string, string> = {}) =>
    startRenderer(testConfig({ RENDER_CONCURRENCY: '1', RENDERER_TEMP_DIR: root, ...env }));
  const roots: string[] = [];
  const freshRoot = (label: string) => {
    const root = uniqueTempRoot(label);
    roots.push(root);
    return root;
  };
  after(() => {
    for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
  });
  const onlyBrowserPid = (root: string) => {
    const pids = browserPidsUnder(root);
    expect(pids, 'browser processes under the temp root').to.have.length(1);
    return pids[0] as number;
  };

  describe('Chromium killed in the middle of a capture', () => {
    const root = freshRoot('crash');
    let renderer: Renderer;
    before(async () => {
      renderer = await rendererOn(root);
    });
    after(() => renderer.close());

    it('fails that capture with 500', async () => {
      const pid = onlyBrowserPid(root);
      const before = fixtures.requests('/slow');
      const capture = renderer.capture(job('/slow?delay=5000'));
      // Killed while it waits for the page: killed earlier, before the capture took its page, the
      // pool would rightly run it on the next browser.
      await eventually('Chromium asked for the page', () => fixtures.requests('/slow') > before);
      process.kill(pid, 'SIGKILL');
      const err = await capture.catch((error: unknown) => error);
      expect(err).to.include({ status: 500 });
    });

    it('replaces the browser, and the next captures succeed', async () => {
      for (let i = 0; i < 3; i += 1) expect((await renderer.capture(job('/simple'))).width).to.equal(1280);
      expect(renderer.stats().browserCrashes).to.equal(1);
      expect(renderer.stats().browserRestarts).to.equal(1);
    });

    it('removes the dead browser directory, leaving only the live one', async () => {
      await eventually('one browser directory is left', () => dirsUnder(root).length === 1);
      expect(browserPidsUnder(root)).to.have.length(1);
    });
  });

  describe('Chromium hung in the middle of a capture', () => {
    const root = freshRoot('hang');
    let renderer: Renderer;
    before(async () => {
      renderer = await rendererOn(root, { CAPTURE_TIMEOUT_MS: '3000' });
    });
    after(() => renderer.close());

    it('fails that capture with 408, kills the hung browser, and the next capture succeeds', async () => {
      const pid = onlyBrowserPid(root);
      const capture = renderer.capture(job('/slow?delay=1000'));
      await eventually('the capture runs', () => renderer.stats().inFlight === 1);
      process.kill(pid, 'SIGSTOP');
      try {
        const err = await capture.catch((error: unknown) => error);
        expect(err).to.include({ status: 408 });
        await eventually('the hung browser is gone', () => !browserPidsUnder(root).includes(pid), 30_000);
      } finally {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // killed, as it should be
        }
      }
      expect((await renderer.capture(job('/simple'))).width).to.equal(1280);
      expect(renderer.stats().browserCrashes).to.equal(1);
    });
  });

  describe('recycling', () => {
    it('replaces a browser after BROWSER_RECYCLE_AFTER captures without failing any, even concurrent ones', async () => {
      const root = freshRoot('recycle');
      const renderer = await rendererOn(root, { RENDER_CONCURRENCY: '2', BROWSER_RECYCLE_AFTER: '3' });
      const firstPid = onlyBrowserPid(root);
      const results = await Promise.all(Array.from({ length: 10 }, () => renderer.capture(job('/simple'))));
      expect(results.map((result) => result.width)).to.deep.equal(Array(10).fill(1280));
      expect(renderer.stats().browserRestarts).to.be.at.least(3);
      expect(renderer.stats().browserCrashes).to.equal(0);
      await eventually('the first browser has exited', () => !browserPidsUnder(root).includes(firstPid));
      await eventually('retired browsers leave no directory behind', () => dirsUnder(root).length === browserPidsUnder(root).length);
      await renderer.close();
    });

    it('replaces a browser above BROWSER_MEMORY_LIMIT_MB', async () => {
      const root = freshRoot('memory');
      // 1 MiB: every browser is over it after its first capture.
      const renderer = await rendererOn(root, { BROWSER_MEMORY_LIMIT_MB: '1' });
      for (let i = 0; i < 3; i += 1) expect((await renderer.capture(job('/simple'))).width).to.equal(1280);
      expect(renderer.stats().browserRestarts).to.be.at.least(2);
      expect(renderer.stats().browserCrashes).to.equal(0);
      await renderer.close();
    });
  });

  describe('per-browser directories', () => {
    it('hold the profile and TMPDIR of each browser, and are gone once the pool is closed', async () => {
      const root = freshRoot('dirs');
      const renderer = await rendererOn(root);
      const [dir] = dirsUnder(root);
      expect(dir).to.match(new RegExp(`^${process.pid}-`));
      expect(fs.readdirSync(path.join(root, dir as string)).sort()).to.deep.equal(['browser.pid', 'profile', 'tmp']);
      await renderer.capture(job('/simple'));
      await renderer.close();
      expect(dirsUnder(root)).to.deep.equal([]);
      expect(browserPidsUnder(root)).to.deep.equal([]);
    });

    it('left by a SIGKILLed service are removed, and its orphaned Chromium killed, when the next one starts', async () => {
      const root = freshRoot('sigkill');
      const child = spawn(process.execPath, ['test/support/renderer-process.ts'], {
        env: { ...process.env, RENDERER_TEMP_DIR: root, RENDER_CONCURRENCY: '1', PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (data: Buffer) => data.toString().includes('ready') && resolve());
        child.once('exit', (code) => reject(new Error(`the renderer process exited with ${code}`)));
      });
      const orphan = onlyBrowserPid(root);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      // What a SIGKILL leaves: the directory, and a Chromium nobody will ever close.
      expect(dirsUnder(root)).to.have.length(1);
      expect(browserPidsUnder(root)).to.deep.equal([orphan]);

      const renderer = await rendererOn(root);
      await eventually('the orphaned Chromium is gone', () => !browserPidsUnder(root).includes(orphan));
      const left = dirsUnder(root);
      expect(left).to.have.length(1);
      expect(left[0]).to.match(new RegExp(`^${process.pid}-`));
      await renderer.close();
      expect(dirsUnder(root)).to.deep.equal([]);
    });
  });
});
