/**
 * The docs' examples, as written: every ```ts block of the TypeScript section of docs/clients.md and
 * of the README is type-checked, then run with this Node against the real service, reading its
 * settings from the environment as the docs say. They import '@viewfinder/client' as a user does:
 * the package's own name, resolved to the built dist/.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, test } from 'node:test';
import { signWebhook, Viewfinder, type IssuedApiKey, type Site } from '../src/index.ts';
import { build, tsc } from './build.ts';
import { PACKAGE_DIR, REPO_ROOT, service, type Service } from './service.ts';

interface Block {
  name: string;
  code: string;
}

/** The ```ts blocks of a Markdown text. */
function blocks(source: string, markdown: string): Block[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match, i) => ({ name: `${source}-${i + 1}`, code: match[1] as string }));
}

const clientsMd = readFileSync(path.join(REPO_ROOT, 'docs/clients.md'), 'utf8');
const section = clientsMd.slice(clientsMd.indexOf('\n## TypeScript\n'), clientsMd.indexOf('\n## ', clientsMd.indexOf('\n## TypeScript\n') + 1));
const all = [...blocks('clients-md', section), ...blocks('readme', readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8'))];
// Inside the package, so that '@viewfinder/client' resolves to the package itself (dist/), and koa to the repository's.
const RUN_DIR = path.join(PACKAGE_DIR, '.docs-run');

let svc: Service;
let site: Site;
let siteKey: IssuedApiKey;

// In one suite: with --test-isolation=none a top-level hook would be every file's.
describe('the docs', () => {
  before(async () => {
    rmSync(RUN_DIR, { recursive: true, force: true });
    mkdirSync(RUN_DIR, { recursive: true });
    for (const block of all) writeFileSync(path.join(RUN_DIR, `${block.name}.ts`), block.code);
    writeFileSync(
      path.join(RUN_DIR, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], allowImportingTsExtensions: true },
        include: ['*.ts'],
      }),
    );
    // No package.json here: the package's own (type module, name @viewfinder/client) is the one that applies.
    await build();
    svc = await service();
    const admin = new Viewfinder({ baseUrl: svc.hosted.base, apiKey: svc.hosted.key });
    site = await admin.sites.create({ name: 'docs examples', allowedDomains: ['127.0.0.1'] });
    siteKey = await admin.keys.create({ name: 'docs examples', siteId: site.id });
  });

  /** The environment a block reads, as the docs describe it. */
  function environment(block: Block, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const selfHosted = block.code.includes("mode: 'self-hosted'");
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      PAGE_URL: svc.pages.page,
      VIEWFINDER_URL: selfHosted ? svc.selfHosted.base : svc.hosted.base,
      VIEWFINDER_API_KEY: selfHosted ? svc.selfHosted.apiKey : svc.hosted.key,
      VIEWFINDER_SITE_ID: site.id,
      VIEWFINDER_KEY_ID: siteKey.id,
      VIEWFINDER_SIGNING_SECRET: siteKey.signingSecret,
      ...extra,
    };
    return env;
  }

  interface Ran {
    code: number | null;
    stdout: string;
    stderr: string;
  }

  function runBlock(block: Block, env: NodeJS.ProcessEnv, cwd: string): Promise<Ran> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(RUN_DIR, `${block.name}.ts`)], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  const isPng = (bytes: Uint8Array) => [0x89, 0x50, 0x4e, 0x47].every((byte, i) => bytes[i] === byte);

  /** A receiver block: started on a free port, sent a real webhook by the service, then a forged one. */
  async function receiverReceives(block: Block): Promise<void> {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    // The captures below are submitted with the full-access key, so the receiver checks with its secret.
    const env = environment(block, { PORT: String(port), VIEWFINDER_SIGNING_SECRET: svc.hosted.signingSecret });
    const child = spawn(process.execPath, [path.join(RUN_DIR, `${block.name}.ts`)], { cwd: RUN_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines: string[] = [];
    const waiters: Array<() => void> = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      for (const wake of waiters.splice(0)) wake();
    });
    const waitFor = async (pattern: RegExp, what: string): Promise<string> => {
      const deadline = Date.now() + 90_000;
      for (;;) {
        const found = lines.find((line) => pattern.test(line));
        if (found) return found;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${block.name}: no ${what}; printed ${lines.join('\n')}\n${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 250);
        });
      }
    };
    try {
      await waitFor(/^listening on/, 'listening line');
      const hook = `http://127.0.0.1:${port}/viewfinder-webhook`;
      const client = new Viewfinder({ baseUrl: svc.hosted.base, apiKey: svc.hosted.key, siteId: site.id });
      const { id } = await client.captures.submit({ url: svc.pages.page, webhookUrl: hook });
      await waitFor(new RegExp(`^verified capture\\.succeeded for ${id}$`), 'verified delivery');
      const body = JSON.stringify({ id: 'job_forged', event: 'capture.succeeded' });
      const forged = await fetch(hook, { method: 'POST', body, headers: { 'Content-Type': 'application/json', 'Viewfinder-Signature': signWebhook(body, 'not the secret') } });
      assert.equal(forged.status, 400);
      await waitFor(/^refused: /, 'refusal');
    } finally {
      child.kill('SIGTERM');
    }
  }

  describe('the docs examples, as written', () => {
    test('there are examples in both documents: the first capture, a render link, a webhook receiver', () => {
      assert.ok(all.some((b) => b.name.startsWith('clients-md') && b.code.includes('screenshots.createImage')));
      assert.ok(all.some((b) => b.name.startsWith('clients-md') && b.code.includes('signRenderLink')));
      assert.ok(all.some((b) => b.name.startsWith('clients-md') && b.code.includes('.listen(')));
      assert.ok(all.some((b) => b.name.startsWith('readme') && b.code.includes("from 'koa'")));
    });

    test('they type-check against the built package', async () => {
      await tsc('-p', path.join(RUN_DIR, 'tsconfig.json'));
    });

    for (const block of all) {
      test(`${block.name} runs`, async () => {
        if (block.code.includes('.listen(')) return receiverReceives(block);
        const cwd = path.join(RUN_DIR, `cwd-${block.name}`);
        mkdirSync(cwd, { recursive: true });
        const ran = await runBlock(block, environment(block), cwd);
        assert.equal(ran.code, 0, `${block.name} exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
        for (const file of readdirSync(cwd).filter((name) => name.endsWith('.png'))) assert.ok(isPng(readFileSync(path.join(cwd, file))), `${file} is a PNG`);
        const img = /<img src="([^"]+)"/.exec(ran.stdout);
        if (block.code.includes('signRenderLink')) {
          assert.ok(img, `an <img> in ${ran.stdout}`);
          const response = await fetch((img[1] as string).replaceAll('&amp;', '&'));
          assert.equal(response.status, 200);
          assert.equal(response.headers.get('content-type'), 'image/png');
        }
        if (block.code.includes('writeFile(')) assert.ok(readdirSync(cwd).some((name) => name.endsWith('.png')), `${block.name} wrote a PNG`);
      });
    }
  });
});
