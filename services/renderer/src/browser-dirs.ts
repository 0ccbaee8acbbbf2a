import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Every Chromium gets its own directory, `<root>/<pid of the service>-<random>`, holding its
 * profile (`profile/`) and its TMPDIR (`tmp/`), so nothing it writes lands loose in /tmp.
 * The directory goes when the browser closes, and a service that was SIGKILLed leaves no lasting
 * garbage either: the next one to start on the same root kills the orphaned Chromium and removes
 * its directory.
 */
export interface BrowserDirs {
  dir: string;
  userDataDir: string;
  tempDir: string;
  /** Remembers the browser's pid, so that a sweep can end it if this service dies without closing it. */
  recordBrowserPid(pid: number): Promise<void>;
  remove(): Promise<void>;
}

const PID_FILE = 'browser.pid';
/** Directories of this process that are in use; a sweep in the same process must leave them alone. */
const liveDirs = new Set<string>();

export async function createBrowserDirs(root: string): Promise<BrowserDirs> {
  await fs.mkdir(root, { recursive: true, mode: 0o700 });
  // Claimed before it exists, so that a sweep running meanwhile in this process never takes it.
  const dir = path.join(root, `${process.pid}-${randomBytes(6).toString('hex')}`);
  liveDirs.add(dir);
  await fs.mkdir(dir, { mode: 0o700 });
  const userDataDir = path.join(dir, 'profile');
  const tempDir = path.join(dir, 'tmp');
  await Promise.all([fs.mkdir(userDataDir), fs.mkdir(tempDir)]);
  return {
    dir,
    userDataDir,
    tempDir,
    recordBrowserPid: (pid) => fs.writeFile(path.join(dir, PID_FILE), String(pid)),
    async remove() {
      await fs.rm(dir, { recursive: true, force: true, maxRetries: 3 });
      liveDirs.delete(dir);
    },
  };
}

/**
 * Removes the directories whose owning service is gone, after killing the Chromium still running
 * in them. Returns how many it removed.
 */
export async function sweepStaleBrowserDirs(root: string): Promise<number> {
  const names = await fs.readdir(root).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const dir = path.join(root, name);
    const owner = Number(/^(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(owner) || liveDirs.has(dir)) continue;
    // Our own pid on a directory we did not create means an earlier incarnation (pid 1 in a container).
    if (owner !== process.pid && isAlive(owner)) continue;
    await killOrphanedBrowser(dir);
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 3 });
    removed += 1;
  }
  return removed;
}

async function killOrphanedBrowser(dir: string): Promise<void> {
  const pid = Number(await fs.readFile(path.join(dir, PID_FILE), 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return;
  // Only a process started on this very directory is ours to kill: pids get reused.
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes(dir)) return;
  try {
    // Puppeteer starts Chromium as a process-group leader; the group holds its zygote and renderers.
    process.kill(-pid, 'SIGKILL');
  } catch {
    process.kill(pid, 'SIGKILL');
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
