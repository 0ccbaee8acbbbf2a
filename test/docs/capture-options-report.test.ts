import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { createApp } from '../../services/api/src/app.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import { sharedRenderer, silentLogger, testConfig } from '../support/harness.ts';
import { startHealthPages } from '../support/health-pages.ts';

/**
 * docs/capture-options.md's deploy pipeline step, run as written with sh, curl and jq against the
 * self-hosted API on loopback, its staging URL swapped for a page served here: it passes for a page
 * that works, and fails with the failing check printed for one that lost its "Add to cart".
 */
const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'capture-options.md'), 'utf8');
const STAGING_URL = 'https://staging.example.com/checkout';

function pipelineStep(): string {
  const step = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, body]) => body as string).find((body) => body.includes('report.checks.failing'));
  if (!step || !step.includes(STAGING_URL)) throw new Error('docs/capture-options.md has no pipeline step checking report.checks.failing on the staging URL');
  return step;
}

function runStep(script: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('docs/capture-options.md: the deploy pipeline step fails a broken page (sh, curl, jq, real Chromium)', () => {
  let pages: FixtureServer;
  let server: http.Server;
  let env: Record<string, string>;

  before(async () => {
    pages = await startHealthPages();
    const app = createApp({ config: testConfig(), renderer: await sharedRenderer(), logger: silentLogger });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    env = { VIEWFINDER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, VIEWFINDER_API_KEY: 'unused-without-API_KEY' };
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await pages.close();
  });

  it('passes (exit 0, nothing printed) for a page that works', async () => {
    const result = await runStep(pipelineStep().replaceAll(STAGING_URL, pages.url('/healthy')), env);
    expect(result).to.deep.equal({ code: 0, stderr: '' });
  });

  it('fails (exit 1) for a page that lost its text, and prints the failing check', async () => {
    const result = await runStep(pipelineStep().replaceAll(STAGING_URL, pages.url('/missing-text')), env);
    expect(result).to.deep.equal({ code: 1, stderr: 'text[0].contains: #buy does not contain "Add to cart"\n' });
  });
});
