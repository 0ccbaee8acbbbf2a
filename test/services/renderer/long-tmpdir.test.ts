import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { browserPidsUnder, dirsUnder } from '../../support/chromium-processes.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { RENDERER_MAIN, startServiceProcess } from '../../support/processes.ts';

/**
 * Issue 14 part 6: Chromium binds its SingletonSocket under its TMPDIR, and a Unix socket's path
 * holds at most 107 bytes. With a TMPDIR of 80 characters the browsers' own folders under it
 * were far past that, and the service did not start. It now gives Chromium a short runtime folder.
 */
describe('the renderer service under a TMPDIR of 80 characters (real process, real Chromium)', () => {
  /** A pid that is certainly not running: above the kernel's pid_max. */
  const DEAD_PID = 4_194_305;
  let fixtures: FixtureServer;
  let tmpdir: string;
  let xdgRuntimeDir: string;

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(() => {
    const base = fs.mkdtempSync('/tmp/vf-long-');
    tmpdir = path.join(base, 'x'.repeat(80 - base.length - 1));
    fs.mkdirSync(tmpdir);
    // A short private folder of this test's own, as systemd gives each user.
    xdgRuntimeDir = fs.mkdtempSync('/tmp/vf-xdg-');
  });
  afterEach(() => {
    fs.rmSync(path.dirname(tmpdir), { recursive: true, force: true });
    fs.rmSync(xdgRuntimeDir, { recursive: true, force: true });
  });

  it('starts, captures, sweeps what a dead service left in both folders, and leaves nothing behind', async () => {
    expect(tmpdir).to.have.lengthOf(80);
    const tempRoot = path.join(tmpdir, 'viewfinder-renderer');
    const runtimeRoot = path.join(xdgRuntimeDir, 'viewfinder');
    // What the old layout would have asked Chromium to bind, with a pid and a suffix of their usual lengths.
    const oldSocket = path.join(tempRoot, '24710-8ab109b105c0', 'tmp', 'org.chromium.Chromium.tAk8Vz', 'SingletonSocket');
    expect(oldSocket.length).to.be.above(107);
    for (const root of [tempRoot, runtimeRoot]) fs.mkdirSync(path.join(root, `${DEAD_PID}-stale`, 'leftover'), { recursive: true });

    const renderer = await startServiceProcess(RENDERER_MAIN, { TMPDIR: tmpdir, XDG_RUNTIME_DIR: xdgRuntimeDir, RENDER_CONCURRENCY: '1' });
    try {
      expect(renderer.output()).to.match(/Removed browser directories left by a service that died/);
      expect(renderer.output()).to.match(/"directories":2/);
      const response = await fetch(`${renderer.base}/v1/captures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: fixtures.url('/geometry'), quality: 'standard', fullPage: false, removeAds: false }),
      });
      expect(response.status, renderer.output()).to.equal(200);
      const png = PNG.sync.read(Buffer.from(await response.arrayBuffer()));
      expect([png.width, png.height]).to.deep.equal([1280, 720]);

      // One browser: its profile under the long root, its TMPDIR under the short one, by the same name.
      expect(browserPidsUnder(tempRoot)).to.have.lengthOf(1);
      const [profileDir] = dirsUnder(tempRoot);
      expect(profileDir).to.match(/^\d+-[0-9a-f]{12}$/);
      expect(dirsUnder(runtimeRoot)).to.deep.equal([profileDir]);
      const chromiumTemp = dirsUnder(path.join(runtimeRoot, profileDir as string, 'tmp')).filter((name) => name.startsWith('.org.chromium.') || name.startsWith('org.chromium.'));
      expect(chromiumTemp, 'Chromium keeps its singleton folder in the short TMPDIR').to.not.be.empty;

      expect(await renderer.stop(), renderer.output()).to.equal(0);
      expect(dirsUnder(tempRoot)).to.deep.equal([]);
      expect(dirsUnder(runtimeRoot)).to.deep.equal([]);
    } finally {
      renderer.child.kill('SIGKILL');
    }
  });
});
