/**
 * The real service that the client libraries' own test suites (clients/typescript: node's runner,
 * clients/python: pytest, clients/go: go test) run against. A suite starts this script as a child
 * process, reads the one JSON line it prints on stdout, and closes the script's stdin (or sends
 * SIGTERM) when it is done; the script then stops everything it started.
 *
 *   node test/clients/serve-for-clients.ts
 *   → {"hosted":{...},"selfHosted":{...},"busy":{...},"pages":{...}}
 *
 * What it starts, all on loopback ports the kernel picks:
 * - `pages`: a page server. `/` is a small HTML page; `/slow?ms=N` answers after N ms (at most 20 s);
 *   `/hook` is a webhook receiver that keeps what it was sent, read back with `GET /hooks`
 *   (`{"deliveries":[{"headers":{...},"body":"raw text"}]}`) and emptied with `DELETE /hooks`.
 * - `hosted`: MODE=hosted on a fresh DATA_DIR, with one account (`accountId`) and its full-access
 *   key (`key`), made as `viewfinder accounts create` makes them; asynchronous captures and monitors
 *   on; PUBLIC_BASE_URL is its own origin.
 * - `selfHosted`: MODE=self-hosted with API_KEY (`apiKey`).
 * - `busy`: MODE=self-hosted with one render slot and no queue (RENDER_CONCURRENCY=1,
 *   RENDER_QUEUE_LIMIT=0), so that a capture sent while another runs is answered 429 with
 *   Retry-After: the case a client's retry must handle.
 * Loopback is allowed as a page and webhook address (PRIVATE_NETWORK_ALLOWLIST=127.0.0.0/8), as in
 * every test of the service.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';
import { viewfinder } from '../support/viewfinder-cli.ts';

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

const PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>Client test page</title></head><body style="margin:0;background:#fff"><h1>Hello from the client tests</h1></body></html>';

function startPages(): Promise<{ server: http.Server; base: string }> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pages');
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (url.pathname === '/hook' && req.method === 'POST') {
        deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        return json(200, { received: true });
      }
      if (url.pathname === '/hooks' && req.method === 'GET') return json(200, { deliveries });
      if (url.pathname === '/hooks' && req.method === 'DELETE') {
        deliveries.length = 0;
        return json(200, { deliveries });
      }
      const html = () => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
      if (url.pathname === '/slow') {
        const ms = Math.min(20_000, Math.max(0, Number(url.searchParams.get('ms') ?? 2000)));
        setTimeout(html, ms);
        return;
      }
      if (url.pathname === '/' || url.pathname === '/index.html') return html();
      json(404, { error: 'Not found' });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

const started: ServiceProcess[] = [];
const dataDirs: string[] = [];
let pages: http.Server | undefined;
let stopping: Promise<void> | undefined;

function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await Promise.allSettled(started.map((service) => service.stop()));
    pages?.close();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return stopping;
}

async function main(): Promise<void> {
  const served = await startPages();
  pages = served.server;

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-clients-'));
  dataDirs.push(dataDir);
  const created = await viewfinder(dataDir, ['accounts', 'create', 'Client libraries'], `${path.dirname(process.execPath)}:${process.env.PATH}`);
  if (created.code !== 0 || !created.json) throw new Error(`viewfinder accounts create failed:\n${created.stderr}`);

  const selfHostedKey = 'vf-clients-self-hosted-key';
  // Render links and asynchronous results name PUBLIC_BASE_URL, so the hosted service's port is known before it starts.
  const hostedPort = await freePort();
  const [hosted, selfHosted, busy] = await Promise.all([
    startServiceProcess(API_MAIN, { MODE: 'hosted', DATA_DIR: dataDir, PUBLIC_BASE_URL: `http://127.0.0.1:${hostedPort}`, JOB_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_MS: '200' }, { port: hostedPort }),
    startServiceProcess(API_MAIN, { MODE: 'self-hosted', API_KEY: selfHostedKey, DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'viewfinder-clients-self-')), JOB_POLL_INTERVAL_MS: '50' }),
    startServiceProcess(API_MAIN, { MODE: 'self-hosted', RENDER_CONCURRENCY: '1', RENDER_QUEUE_LIMIT: '0', ASYNC_CAPTURES: 'false' }),
  ]);
  started.push(hosted, selfHosted, busy);

  process.stdout.write(
    `${JSON.stringify({
      hosted: { base: hosted.base, accountId: created.json.account.id, key: created.json.key.key, keyId: created.json.key.id, signingSecret: created.json.key.signingSecret },
      selfHosted: { base: selfHosted.base, apiKey: selfHostedKey },
      busy: { base: busy.base },
      pages: { base: served.base, page: `${served.base}/`, slow: `${served.base}/slow`, hook: `${served.base}/hook`, hooks: `${served.base}/hooks` },
    })}\n`,
  );
}

process.stdin.on('end', () => void stopAll().then(() => process.exit(0)));
process.stdin.resume();
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stopAll().then(() => process.exit(0)));

main().catch(async (err: unknown) => {
  process.stderr.write(`serve-for-clients: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  await stopAll();
  process.exit(1);
});
