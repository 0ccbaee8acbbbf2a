import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh RENDERER_TEMP_DIR for one test, so that its browsers and directories are its own. */
export function uniqueTempRoot(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vf-${label}-`));
}

/** Pids of the Chromium browser processes (not their zygotes or renderers) whose profile lies under `root`. */
export function browserPidsUnder(root: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const isBrowser = args.some((arg) => arg.startsWith(`--user-data-dir=${root}`)) && !args.some((arg) => arg.startsWith('--type='));
    if (isBrowser && !isZombie(Number(entry))) pids.push(Number(entry));
  }
  return pids;
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Entries directly under `root` (one per live browser). */
export function dirsUnder(root: string): string[] {
  try {
    return fs.readdirSync(root);
  } catch {
    return [];
  }
}
