/**
 * Ends a process and the group it leads: puppeteer starts Chromium as a process-group leader, and
 * the group holds its zygote, GPU process and renderers. A pid that leads no group is killed alone.
 */
export function killProcessGroupOf(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
