import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createBrowserDirs, sweepStaleBrowserDirs } from '../../../services/renderer/src/browser-dirs.ts';
import { chromiumRuntimeRoot, MAX_RUNTIME_ROOT_BYTES } from '../../../services/renderer/src/config.ts';
import { uniqueTempRoot } from '../../support/chromium-processes.ts';

describe('per-browser directories and the start-up sweep', () => {
  let root: string;
  beforeEach(() => {
    root = uniqueTempRoot('sweep');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A pid that is certainly not running: above the kernel's pid_max. */
  const DEAD_PID = 4_194_305;

  it('creates a profile and a tmp directory under <root>/<pid>-<random>, and removes them', async () => {
    const dirs = await createBrowserDirs(root);
    expect(path.basename(dirs.dir)).to.match(new RegExp(`^${process.pid}-[0-9a-f]{12}$`));
    expect(dirs.userDataDir).to.equal(path.join(dirs.dir, 'profile'));
    expect(dirs.tempDir).to.equal(path.join(dirs.dir, 'tmp'));
    expect(fs.statSync(dirs.userDataDir).isDirectory()).to.equal(true);
    expect(fs.statSync(dirs.tempDir).isDirectory()).to.equal(true);
    await dirs.remove();
    expect(fs.readdirSync(root)).to.deep.equal([]);
  });

  it('removes the directories of a dead owner, with whatever they hold', async () => {
    const stale = path.join(root, `${DEAD_PID}-abc`);
    fs.mkdirSync(path.join(stale, 'tmp', '.org.chromium.Chromium.x'), { recursive: true });
    fs.writeFileSync(path.join(stale, 'tmp', 'big'), Buffer.alloc(1024));
    expect(await sweepStaleBrowserDirs(root)).to.equal(1);
    expect(fs.readdirSync(root)).to.deep.equal([]);
  });

  it('keeps the directories of another live process, and the live ones of this process', async () => {
    const otherLive = path.join(root, '1-abc'); // pid 1 is always alive
    fs.mkdirSync(otherLive);
    const mine = await createBrowserDirs(root);
    expect(await sweepStaleBrowserDirs(root)).to.equal(0);
    expect(fs.readdirSync(root).sort()).to.deep.equal([path.basename(mine.dir), '1-abc'].sort());
    await mine.remove();
  });

  it('removes a directory carrying this pid that this process did not create (an earlier incarnation, as pid 1 in a container)', async () => {
    fs.mkdirSync(path.join(root, `${process.pid}-old`));
    expect(await sweepStaleBrowserDirs(root)).to.equal(1);
    expect(fs.readdirSync(root)).to.deep.equal([]);
  });

  it('leaves entries that are not browser directories alone', async () => {
    fs.mkdirSync(path.join(root, 'not-ours'));
    expect(await sweepStaleBrowserDirs(root)).to.equal(0);
    expect(fs.readdirSync(root)).to.deep.equal(['not-ours']);
  });

  it('does nothing when the root does not exist yet', async () => {
    expect(await sweepStaleBrowserDirs(path.join(root, 'missing'))).to.equal(0);
  });

  describe('with a runtime root of its own (a temp root too long for Chromium)', () => {
    let runtimeRoot: string;
    beforeEach(() => {
      runtimeRoot = uniqueTempRoot('run');
    });
    afterEach(() => fs.rmSync(runtimeRoot, { recursive: true, force: true }));

    it('puts the TMPDIR under the runtime root, by the same name as the profile directory, and removes both', async () => {
      const dirs = await createBrowserDirs(root, runtimeRoot);
      expect(path.dirname(dirs.userDataDir)).to.equal(dirs.dir);
      expect(path.dirname(dirs.dir)).to.equal(root);
      expect(dirs.tempDir).to.equal(path.join(runtimeRoot, path.basename(dirs.dir), 'tmp'));
      expect(fs.statSync(dirs.tempDir).isDirectory()).to.equal(true);
      await dirs.remove();
      expect(fs.readdirSync(root)).to.deep.equal([]);
      expect(fs.readdirSync(runtimeRoot)).to.deep.equal([]);
    });

    it('sweeps a dead owner from both roots, and leaves live ones in both', async () => {
      for (const r of [root, runtimeRoot]) fs.mkdirSync(path.join(r, `${DEAD_PID}-abc`, 'org.chromium.Chromium.x'), { recursive: true });
      const mine = await createBrowserDirs(root, runtimeRoot);
      expect(await sweepStaleBrowserDirs(root, runtimeRoot)).to.equal(2);
      expect(fs.readdirSync(root)).to.deep.equal([path.basename(mine.dir)]);
      expect(fs.readdirSync(runtimeRoot)).to.deep.equal([path.basename(mine.dir)]);
      await mine.remove();
    });

    it('refuses a runtime root that is a symlink, as someone could plant in a shared /tmp', async () => {
      const planted = path.join(runtimeRoot, 'planted');
      fs.symlinkSync(root, planted);
      let error: unknown;
      await createBrowserDirs(root, planted).catch((err: unknown) => (error = err));
      expect(String(error)).to.match(/is not a directory owned by this user/);
    });
  });
});

describe("Chromium's runtime root: short enough for its SingletonSocket", () => {
  const uid = process.getuid?.() ?? 0;
  const long = `/tmp/${'x'.repeat(75)}/viewfinder-renderer`;

  it('is the temp root itself when that is short enough', () => {
    expect(chromiumRuntimeRoot('/tmp/viewfinder-renderer', { XDG_RUNTIME_DIR: '/run/user/1000' })).to.equal('/tmp/viewfinder-renderer');
  });

  it('is a folder in XDG_RUNTIME_DIR when the temp root is too long', () => {
    expect(chromiumRuntimeRoot(long, { XDG_RUNTIME_DIR: '/run/user/1000' })).to.equal('/run/user/1000/viewfinder');
  });

  it('is a folder in /tmp when there is no XDG_RUNTIME_DIR, or it is too long as well', () => {
    expect(chromiumRuntimeRoot(long, {})).to.equal(`/tmp/viewfinder-${uid}`);
    expect(chromiumRuntimeRoot(long, { XDG_RUNTIME_DIR: `/${'r'.repeat(30)}` })).to.equal(`/tmp/viewfinder-${uid}`);
  });

  it('leaves room for the longest TMPDIR a browser gets and Chromium\'s socket inside it, within 107 bytes', () => {
    const tempDir = path.join('r'.repeat(MAX_RUNTIME_ROOT_BYTES), `${4_194_304}-${'0'.repeat(12)}`, 'tmp');
    expect(path.join(tempDir, 'org.chromium.Chromium.XXXXXX', 'SingletonSocket').length).to.equal(107);
  });
});
