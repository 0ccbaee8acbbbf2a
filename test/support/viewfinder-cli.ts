import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const VIEWFINDER_BIN = fileURLToPath(new URL('../../bin/viewfinder', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not); the tests assert on its shape. */
  json: any;
}

/** Runs bin/viewfinder as its own process on DATA_DIR, with this test's Node first on PATH unless told otherwise. */
export function viewfinder(
  dataDir: string,
  args: string[],
  pathEnv = `${path.dirname(process.execPath)}:${process.env.PATH}`,
  extraEnv: Record<string, string> = {},
): Promise<Run> {
  const { MONGODB_URI: _ignored, ...env } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(VIEWFINDER_BIN, args, { env: { ...env, ...extraEnv, DATA_DIR: dataDir, PATH: pathEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}
