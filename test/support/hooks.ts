import { closeAllRenderers } from './harness.ts';

/**
 * Where the suite's time goes, file by file, hooks included: a file's time runs from the end of the
 * previous file's last test to the end of its own last test (so its `before` hooks count, and the
 * previous file's `after` hooks too). Printed once the suite ends, slowest first, so that a CI log
 * shows what to make faster (the suite has a time budget: README, "make test").
 */
const fileTimes = new Map<string, number>();
let currentFile: string | undefined;
let lastTestEnd = performance.now();

function fileOf(test: Mocha.Runnable | undefined): string {
  return test?.file?.replace(`${process.cwd()}/`, '') ?? '(no file)';
}

function printFileTimes(): void {
  const rows = [...fileTimes].sort((a, b) => b[1] - a[1]).slice(0, 30);
  const total = [...fileTimes.values()].reduce((sum, ms) => sum + ms, 0);
  const lines = rows.map(([file, ms]) => `${(ms / 1000).toFixed(0).padStart(6)} s  ${file}`);
  process.stdout.write(`\n  The slowest test files (hooks included; ${(total / 1000).toFixed(0)} s in all):\n${lines.join('\n')}\n`);
}

/** Mocha root hooks: Chromium pools started by any test file are closed once the suite ends. */
export const mochaHooks = {
  beforeEach(this: Mocha.Context) {
    currentFile = fileOf(this.currentTest);
  },
  afterEach(this: Mocha.Context) {
    const now = performance.now();
    const file = currentFile ?? fileOf(this.currentTest);
    fileTimes.set(file, (fileTimes.get(file) ?? 0) + (now - lastTestEnd));
    lastTestEnd = now;
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await closeAllRenderers();
    if (fileTimes.size > 1) printFileTimes();
  },
};
