import fs from 'node:fs';

const PAGE_SIZE = 4096;

/**
 * Resident memory of a process and all its descendants, in bytes, read from /proc (Linux). Chromium
 * is a tree: the browser, its zygotes, GPU and network services, and one renderer per context.
 * Undefined where /proc is not available.
 */
export function processTreeRss(rootPid: number): number | undefined {
  const pids = processTree(rootPid);
  return pids && pids.reduce((total, pid) => total + rssOf(pid), 0);
}

/**
 * A process and all its descendants, root first; undefined where /proc is not available.
 */
export function processTree(rootPid: number): number[] | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(`/proc/${entry}/stat`);
    // The command name (field 2) may hold spaces and parentheses; the parent pid follows its last ')'.
    const ppid = Number(stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid)) continue;
    const siblings = children.get(ppid) ?? [];
    siblings.push(Number(entry));
    children.set(ppid, siblings);
  }
  const tree: number[] = [];
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    tree.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/**
 * Proportional set size of one process in bytes (0 when it is gone): its private memory plus its
 * share of what it maps together with others. Chromium's processes share much of their memory,
 * so PSS, unlike RSS, adds up across them without counting shared pages more than once.
 */
export function pssOf(pid: number): number {
  const kib = /^Pss:\s+(\d+) kB/m.exec(readProc(`/proc/${pid}/smaps_rollup`) ?? '')?.[1];
  return kib === undefined ? 0 : Number(kib) * 1024;
}

/** Resident memory of one process, in bytes (0 when it is gone). */
export function rssOf(pid: number): number {
  const statm = readProc(`/proc/${pid}/statm`);
  return statm ? Number(statm.split(' ')[1]) * PAGE_SIZE : 0;
}

function readProc(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
