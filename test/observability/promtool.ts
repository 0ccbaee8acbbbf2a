import { spawnSync } from 'node:child_process';

/**
 * Runs promtool (Debian's `prometheus` package, which `make test` installs). A missing promtool
 * fails the test that needs it: alert rules that were never checked must not pass silently.
 */
export function promtool(args: string[], cwd?: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  if (run.error) {
    throw new Error(`promtool could not run (${run.error.message}); \`make test\` installs it with Debian's prometheus package`);
  }
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
