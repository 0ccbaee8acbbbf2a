import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { createApp } from '../../services/api/src/app.ts';
import { sharedRenderer, silentLogger, testConfig } from '../support/harness.ts';

/**
 * docs/capture-options.md's sign-in journey, run as written with sh, jq and curl against the
 * self-hosted API on loopback, its https://app.example.com swapped for a small app served here (a
 * login form whose POST sets a session cookie and redirects, a dashboard, a billing page that needs
 * the cookie): it prints what the page says it prints, and, with a wrong password, answers the 422
 * the page shows, step for step.
 */
const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'capture-options.md'), 'utf8');
const SECTION = doc.slice(doc.indexOf('## steps: sign in, fill, click, then capture'));
const APP_ORIGIN = 'https://app.example.com';
const DOC_PASSWORD = 'correct horse battery staple';
const PRINTS = 'jq -r \'.journey.steps[] | "\\(.action) \\(.status)"\'';

function journeyScript(): string {
  const script = /```sh\n([\s\S]*?)```/.exec(SECTION)?.[1];
  if (!script || !script.includes(APP_ORIGIN) || !script.includes(`APP_PASSWORD='${DOC_PASSWORD}'`) || !script.includes(PRINTS)) {
    throw new Error('docs/capture-options.md\'s steps section has no sh block with the sign-in journey as this test knows it');
  }
  return script;
}

function run(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The app the page signs in to. */
async function startApp() {
  const html = (body: string) => `<!doctype html><html><head><meta charset="utf-8"></head><body>${body}</body></html>`;
  const server = http.createServer((req, res) => {
    const signedIn = req.headers.cookie === 'session=s1';
    const send = (body: string) => res.writeHead(200, { 'content-type': 'text/html' }).end(html(body));
    if (req.method === 'POST' && req.url === '/login') {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const ok = form.get('email') === 'ada@example.com' && form.get('password') === DOC_PASSWORD;
        res.writeHead(303, ok ? { location: '/home', 'set-cookie': 'session=s1; Path=/; HttpOnly' } : { location: '/login' }).end();
      });
      return;
    }
    if (req.url === '/login') return send('<form method="post" action="/login"><input id="email" name="email"><input id="password" name="password" type="password"><button>Sign in</button></form>');
    if (req.url === '/home' && signedIn) return send('<main id="dashboard">Dashboard <a href="/billing">Billing</a></main>');
    if (req.url === '/billing' && signedIn) return send('<h1>Billing</h1>');
    res.writeHead(303, { location: '/login' }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

describe('docs/capture-options.md: the sign-in journey, as written (sh, jq, curl, real Chromium)', () => {
  let app: Awaited<ReturnType<typeof startApp>>;
  let server: http.Server;
  let substitute: (script: string) => string;

  before(async () => {
    app = await startApp();
    const api = createApp({ config: testConfig({ NAVIGATION_TIMEOUT_MS: '8000', CAPTURE_TIMEOUT_MS: '30000' }), renderer: await sharedRenderer(), logger: silentLogger });
    server = http.createServer(api.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const apiAddress = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    substitute = (script) => script.replaceAll(APP_ORIGIN, app.origin).replaceAll('localhost:3000', apiAddress);
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await app?.close();
  });

  it('prints each step and its status, as the page shows', async () => {
    const printed = /prints\n\n```text\n([\s\S]*?)```/.exec(SECTION)?.[1];
    expect(printed, 'the printed lines in the section').to.be.a('string');
    const result = await run(substitute(journeyScript()));
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);
    expect(result.stdout).to.equal(printed);
  });

  it('with a wrong password, answers the 422 the page shows: its error, and its report but for the times', async () => {
    const documented = JSON.parse(/with a wrong\npassword:\n\n```json\n([\s\S]*?)```/.exec(SECTION)?.[1] ?? 'null');
    expect(documented, 'the 422 example').to.be.an('object');
    const wrong = substitute(journeyScript()).replace(`APP_PASSWORD='${DOC_PASSWORD}'`, "APP_PASSWORD='wrong'").replace(PRINTS, 'cat');
    const result = await run(wrong);
    expect(result.code, result.stderr).to.equal(0);
    const answer = JSON.parse(result.stdout);
    expect(answer.image).to.match(/^data:image\/png;base64,/);
    const withoutTimes = (body: { journey: { steps: { durationMs?: number }[] } }) => ({
      ...body,
      image: 'data:image/png;base64,...',
      journey: { ...body.journey, steps: body.journey.steps.map(({ durationMs: _ms, ...step }) => step) },
    });
    expect(withoutTimes(answer)).to.deep.equal(withoutTimes(documented));
  });
});
