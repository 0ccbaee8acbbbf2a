/** The package as published: it type-checks, builds to dist/, and packs what a user installs. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { build, tsc } from './build.ts';
import { PACKAGE_DIR } from './service.ts';

const run = promisify(execFile);

describe('the package', () => {
  test('builds to dist/: JavaScript and declarations, with .js imports', async () => {
    await build();
    for (const file of ['index.js', 'index.d.ts', 'client.js', 'webhooks.js', 'render-links.js']) assert.ok(existsSync(path.join(PACKAGE_DIR, 'dist', file)), file);
    assert.match(readFileSync(path.join(PACKAGE_DIR, 'dist/index.js'), 'utf8'), /from "\.\/client\.js"/);
    const built = (await import(path.join(PACKAGE_DIR, 'dist/index.js'))) as typeof import('../src/index.ts');
    assert.equal(typeof built.Viewfinder, 'function');
    assert.equal(built.default, built.Viewfinder);
  });

  test('the tests type-check with the sources', async () => {
    await tsc('-p', 'tsconfig.test.json');
  });

  test('has no runtime dependency, and packs dist, the README, the changelog and the licence', async (t) => {
    const pkg = JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(pkg.dependencies, undefined);
    assert.equal(pkg.license, 'Apache-2.0');
    await build();
    let packed: string;
    try {
      packed = (await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE_DIR, timeout: 120_000 })).stdout;
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return t.skip('npm is not on PATH');
      throw err;
    }
    const files = (JSON.parse(packed) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'README.md', 'CHANGELOG.md', 'LICENSE', 'package.json']) assert.ok(files.includes(file), `${file} in ${files.join(', ')}`);
    assert.ok(!files.some((file) => file.startsWith('src/') || file.startsWith('test/')));
  });
});
