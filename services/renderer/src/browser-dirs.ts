import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { killProcessGroupOf } from './process-group.ts';

/**
 * Every Chromium gets its own directory, `<root>/<pid of the service>-<random>`, holding its
 * profile (`profile/`), and one of the same name under the runtime root holding its TMPDIR
 * (`tmp/`), so nothing it writes lands loose in /tmp. The runtime root is the root itself unless
 * that is too long, and then both are one directory (see config.ts's chromiumRuntimeRoot):
 * Chromium puts its SingletonSocket in a folder of its TMPDIR, and a Unix socket's path holds at
 * most 107 bytes.
 * Both go when the browser closes, and a service that was SIGKILLed leaves no lasting garbage
 * either: the next one to start on the same roots kills the orphaned Chromium and removes its
 * directories.
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

export async function createBrowserDirs(root: string, runtimeRoot = root): Promise<BrowserDirs> {
  await Promise.all([...new Set([root, runtimeRoot])].map(ensurePrivateRoot));
  const name = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const dir = path.join(root, name);
  const own = [...new Set([dir, path.join(runtimeRoot, name)])];
  // Claimed before they exist, so that a sweep running meanwhile in this process never takes them.
  for (const claimed of own) liveDirs.add(claimed);
  await Promise.all(own.map((created) => fs.mkdir(created, { mode: 0o700 })));
  const userDataDir = path.join(dir, 'profile');
  const tempDir = path.join(runtimeRoot, name, 'tmp');
  await Promise.all([fs.mkdir(userDataDir), fs.mkdir(tempDir)]);
  return {
    dir,
    userDataDir,
    tempDir,
    recordBrowserPid: (pid) => fs.writeFile(path.join(dir, PID_FILE), String(pid)),
    async remove() {
      await Promise.all(own.map((created) => fs.rm(created, { recursive: true, force: true, maxRetries: 3 })));
      for (const created of own) liveDirs.delete(created);
    },
  };
}

/**
 * Creates a root if needed and makes sure it is a directory of this user's, not a symlink or a
 * folder someone else prepared: a short runtime root may lie directly in a shared /tmp.
 */
async function ensurePrivateRoot(root: string): Promise<void> {
  await fs.mkdir(root, { recursive: true, mode: 0o700 });
  const stat = await fs.lstat(root);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) {
    throw new Error(`${root} is not a directory owned by this user; remove it or set RENDERER_TEMP_DIR elsewhere`);
  }
}

/**
 * Removes the directories whose owning service is gone, after killing the Chromium still running
 * in them, under both roots. Returns how many it removed.
 */
export async function sweepStaleBrowserDirs(root: string, runtimeRoot = root): Promise<number> {
  let removed = 0;
  for (const swept of new Set([root, runtimeRoot])) removed += await sweepRoot(swept);
  return removed;
}

async function sweepRoot(root: string): Promise<number> {
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
  killProcessGroupOf(pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
