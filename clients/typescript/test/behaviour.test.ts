/**
 * What the library does on the wire, against a tiny local server that records each request and
 * answers as told: the user agent and key header, Retry-After as seconds and as a date, 503, a lost
 * connection, a Retry-After too long to wait, and the version.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { inspect } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { APIConnectionError, RateLimitError, ServerError, VERSION, Viewfinder, type RetryInfo } from '../src/index.ts';
import { PACKAGE_DIR } from './service.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Answer = { status: number; headers?: Record<string, string>; body?: unknown };

const seen: Seen[] = [];
let script: Answer[] = [];
let server: http.Server;
let base: string;
const KEY = 'vf_local-test-key-that-must-never-show-in-an-error';

// In one suite: with --test-isolation=none a top-level hook would be every file's.
describe('a local server', () => {
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const answer = script.shift() ?? { status: 200, body: { sites: [] } };
        res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers }).end(JSON.stringify(answer.body ?? {}));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  function client(retries: RetryInfo[] = [], extra: Partial<ConstructorParameters<typeof Viewfinder>[0]> = {}): Viewfinder {
    seen.length = 0;
    return new Viewfinder({ baseUrl: `${base}/`, apiKey: KEY, onRetry: (info) => retries.push(info), ...extra });
  }

  describe('on the wire', () => {
    test('the user agent names the library and its version; the key goes as X-API-Key', async () => {
      await client([], { appInfo: 'my-app/1.2' }).sites.list();
      const [request] = seen;
      assert.equal(request?.url, '/api/sites');
      assert.equal(request?.headers['user-agent'], `viewfinder-typescript/${VERSION} node/${process.versions.node} my-app/1.2`);
      assert.equal(request?.headers['x-api-key'], KEY);
      assert.equal(request?.headers.accept, 'application/json');
    });

    test('the version is package.json\'s', () => {
      const pkg = JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string };
      assert.equal(VERSION, pkg.version);
    });

    test('a hosted capture gets the client siteId; a self-hosted one goes to /screenshot without it', async () => {
      script = [{ status: 200, body: { success: true } }, { status: 200, body: { success: true } }];
      await client([], { siteId: 'site_1' }).screenshots.create({ url: 'https://example.com/' });
      assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), { url: 'https://example.com/', site_id: 'site_1' });
      await client([], { mode: 'self-hosted', siteId: 'site_1' }).screenshots.create({ url: 'https://example.com/' });
      assert.equal(seen[0]?.url, '/screenshot');
      assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), { url: 'https://example.com/' });
    });

    test('a submit carries an Idempotency-Key the library made, the same on every retry', async () => {
      script = [{ status: 503, headers: { 'Retry-After': '0' }, body: { success: false, error: 'Service unavailable: no renderer is ready' } }, { status: 202, body: { id: 'job_1', status: 'queued', statusUrl: 'x' } }];
      const retries: RetryInfo[] = [];
      const accepted = await client(retries).captures.submit({ url: 'https://example.com/' });
      assert.equal(accepted.id, 'job_1');
      assert.equal(seen.length, 2);
      assert.match(String(seen[0]?.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
      assert.equal(seen[1]?.headers['idempotency-key'], seen[0]?.headers['idempotency-key']);
      assert.deepEqual(retries.map((r) => [r.status, r.delayMs]), [[503, 0]]);
    });

    test('Retry-After as an HTTP date is honoured', async () => {
      script = [{ status: 429, headers: { 'Retry-After': new Date(Date.now() - 1000).toUTCString() }, body: { success: false, error: 'Rate limit exceeded' } }];
      const retries: RetryInfo[] = [];
      await client(retries).sites.list();
      assert.equal(seen.length, 2);
      assert.equal(retries[0]?.delayMs, 0);
    });

    test('without Retry-After, exponential backoff; after maxRetries, the error', async () => {
      const unavailable: Answer = { status: 503, body: { success: false, error: 'Service unavailable: no renderer is ready' } };
      script = [unavailable, unavailable, unavailable];
      const retries: RetryInfo[] = [];
      const err = await client(retries, { maxRetries: 2 }).sites.list().catch((e: unknown) => e);
      assert.ok(err instanceof ServerError);
      assert.equal(err.status, 503);
      assert.equal(err.message, 'Service unavailable: no renderer is ready');
      assert.equal(seen.length, 3);
      assert.ok((retries[0]?.delayMs ?? 0) >= 250 && (retries[0]?.delayMs ?? 0) <= 500);
      assert.ok((retries[1]?.delayMs ?? 0) >= 500 && (retries[1]?.delayMs ?? 0) <= 1000);
    });

    test('a Retry-After longer than maxRetryDelay is not waited out', async () => {
      script = [{ status: 429, headers: { 'Retry-After': '3600' }, body: { success: false, error: 'Rate limit exceeded: 5 captures per minute for this API key; retry in 3600 s' } }];
      const retries: RetryInfo[] = [];
      const err = await client(retries).screenshots.create({ url: 'https://example.com/', site_id: 's' }).catch((e: unknown) => e);
      assert.ok(err instanceof RateLimitError);
      assert.equal(err.retryAfter, 3600);
      assert.equal(seen.length, 1);
      assert.deepEqual(retries, []);
    });

    test('a refused connection: a GET is retried, a capture is not; the error never shows the key', async () => {
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const retries: RetryInfo[] = [];
      const offline = new Viewfinder({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY, maxRetries: 1, onRetry: (info) => retries.push(info) });
      const err = await offline.sites.list().catch((e: unknown) => e);
      assert.ok(err instanceof APIConnectionError);
      assert.equal(retries.length, 1);
      assert.equal(retries[0]?.status, undefined);
      const capture = await offline.screenshots.create({ url: 'https://example.com/', site_id: 's' }).catch((e: unknown) => e);
      assert.ok(capture instanceof APIConnectionError);
      assert.equal(retries.length, 1);
      for (const shown of [String(err), inspect(err, { depth: Infinity, showHidden: true }), JSON.stringify(err), inspect(offline, { depth: Infinity, showHidden: true })]) {
        assert.ok(!shown.includes(KEY), shown);
      }
    });

    test('no baseUrl: a TypeError that says how to give one', () => {
      const saved = process.env.VIEWFINDER_URL;
      delete process.env.VIEWFINDER_URL;
      try {
        assert.throws(() => new Viewfinder({ apiKey: KEY }), /give baseUrl \(or set VIEWFINDER_URL\)/);
      } finally {
        if (saved !== undefined) process.env.VIEWFINDER_URL = saved;
      }
    });
  });
});
