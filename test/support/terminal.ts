/**
 * One bash session that runs a document's shell blocks one after another, as a reader pastes them
 * into one terminal: the variables a block sets are there for the next. Each block is sourced from
 * a file with stdin on /dev/null (so no command of a block can read the next block), and a command
 * of the block that fails is reported even when a later one succeeds (an ERR trap: what `set -e`
 * would stop at, without ending the session).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface BlockRun {
  stdout: string;
  stderr: string;
  /** The commands of the block that failed, with their exit status ("2: curl -s ..."). */
  failed: string[];
}

export interface Terminal {
  /** Runs `code` in the session; rejects when it has not finished within `timeoutMs`. */
  run(code: string, timeoutMs?: number): Promise<BlockRun>;
  close(): Promise<void>;
}

export function startTerminal({ cwd, env }: { cwd: string; env: NodeJS.ProcessEnv }): Terminal {
  const scripts = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-terminal-'));
  const shell = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  shell.stdout.on('data', (chunk) => (stdout += chunk));
  shell.stderr.on('data', (chunk) => (stderr += chunk));
  shell.stdin.write(`set -o pipefail\ntrap 'echo "__FAILED__ $?: $BASH_COMMAND" >&2' ERR\n`);
  let blocks = 0;

  return {
    async run(code, timeoutMs = 60_000) {
      blocks += 1;
      const done = `__DONE_${blocks}__`;
      const file = path.join(scripts, `block-${blocks}.sh`);
      writeFileSync(file, `${code}\n`);
      const [outStart, errStart] = [stdout.length, stderr.length];
      shell.stdin.write(`source ${file} </dev/null\necho ${done}\necho ${done} >&2\n`);
      const deadline = Date.now() + timeoutMs;
      while (!(stdout.includes(`${done}\n`, outStart) && stderr.includes(`${done}\n`, errStart))) {
        if (shell.exitCode !== null) throw new Error(`the shell exited (${shell.exitCode}) running:\n${code}\n${stderr.slice(errStart)}`);
        if (Date.now() > deadline) throw new Error(`the block did not finish within ${timeoutMs} ms:\n${code}\nstdout: ${stdout.slice(outStart)}\nstderr: ${stderr.slice(errStart)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const out = stdout.slice(outStart, stdout.indexOf(`${done}\n`, outStart));
      const err = stderr.slice(errStart, stderr.indexOf(`${done}\n`, errStart));
      const failed = [...err.matchAll(/^__FAILED__ (.*)$/gm)].map((match) => match[1] as string);
      return { stdout: out, stderr: err.replace(/^__FAILED__ .*\n/gm, ''), failed };
    },
    async close() {
      if (shell.exitCode === null && shell.signalCode === null) {
        const exited = once(shell, 'exit');
        shell.stdin.end('exit\n');
        const timer = setTimeout(() => shell.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(scripts, { recursive: true, force: true });
    },
  };
}
