import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createBrowserDirs, sweepStaleBrowserDirs } from '../../../services/renderer/src/browser-dirs.ts';
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
});
