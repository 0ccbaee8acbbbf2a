import fs from 'node:fs';
import { processTree } from '../../services/renderer/src/process-memory.ts';

/** Clock ticks per second of /proc/PID/stat's times: USER_HZ, 100 on Linux. */
const TICKS_PER_SECOND = 100;

/**
 * CPU time in ms that a process has used (user and system), and with `tree`, its descendants too,
 * counting those already gone through their parents' reaped-children times: a Chromium's renderers
 * come and go with every capture. CPU time, unlike wall time, hardly moves with other work on the
 * machine, so figures per capture compare across subjects of one run even on a loaded machine.
 */
export function cpuMs(rootPid: number, options: { tree?: boolean } = {}): number {
  const pids = options.tree ? (processTree(rootPid) ?? [rootPid]) : [rootPid];
  let ticks = 0;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After the command name: state is field 3, so utime, stime, cutime, cstime (14 to 17) sit at 11 to 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
    if (options.tree) ticks += Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
