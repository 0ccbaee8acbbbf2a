/** The build: tsc as the package's `build` script runs it, once per test process. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_DIR, REPO_ROOT } from './service.ts';

const run = promisify(execFile);

/** The TypeScript compiler: VIEWFINDER_TSC (test.sh sets it), else the repository's own. */
export const TSC = process.env.VIEWFINDER_TSC || path.join(REPO_ROOT, 'node_modules/.bin/tsc');

export async function tsc(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(TSC, args, { cwd: PACKAGE_DIR, timeout: 180_000 });
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`tsc ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

let built: Promise<unknown> | undefined;
/** Builds src/ into dist/ (JavaScript and .d.ts), as `npm run build` and `prepare` do. */
export function build(): Promise<unknown> {
  built ??= tsc('-p', 'tsconfig.json');
  return built;
}
