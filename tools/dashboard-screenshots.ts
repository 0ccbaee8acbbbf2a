/**
 * `make screenshots`: pictures of the dashboard for docs/images/, taken by Viewfinder itself.
 * It starts the real API service (MODE=hosted, in-process renderer) on a throwaway DATA_DIR with
 * sample data, and captures each page through POST /api/screenshot. The signed-in pages are
 * reached through a small loopback proxy that plays the deployment's single sign-on proxy (it adds
 * the user's email and the shared secret), so the capture browser needs no password or cookie.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashPassword } from '../lib/passwords.ts';
import { openSqliteStore } from '../lib/store/sqlite.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = path.join(ROOT, 'docs/images');
const EMAIL = 'ada@example.com';
const SSO_SECRET = randomBytes(24).toString('base64url');
const SSO_EMAIL_HEADER = 'X-Forwarded-Email';

async function seed(dataDir: string) {
  const store = openSqliteStore({ dataDir });
  try {
    const account = await store.createAccount({ name: 'Acme' });
    await store.createUser({ accountId: account.id, email: EMAIL, passwordHash: await hashPassword(randomBytes(18).toString('base64url')) });
    const shop = await store.createSite({ accountId: account.id, name: 'Shop', allowedDomains: ['shop.example.com', 'example.com'] });
    const docs = await store.createSite({ accountId: account.id, name: 'Docs', allowedDomains: ['127.0.0.1'] });
    const managedBy = { namespace: 'team-a', name: 'status-page', uid: randomBytes(8).toString('hex') };
    const status = await store.upsertManagedSite({ accountId: account.id, name: 'status-page', allowedDomains: ['status.example.com'], managedBy: { kind: 'Site', ...managedBy } });
    const full = await store.createKey({ accountId: account.id, name: 'docs screenshots', kind: 'full' });
    await store.createKey({ accountId: account.id, name: 'storefront widget', kind: 'site', siteId: shop.id, restrictDomains: true });
    await store.createKey({ accountId: account.id, name: 'docs preview', kind: 'site', siteId: docs.id });
    await store.upsertManagedKey({ accountId: account.id, name: 'status-page', kind: 'site', siteId: status.id, restrictDomains: true, managedBy: { kind: 'ApiKey', ...managedBy } });
    return { fullKey: full.secret, siteId: docs.id };
  } finally {
    await store.close();
  }
}

/** Starts services/api/src/main.ts and resolves with its port once it listens and is ready. */
function startService(dataDir: string): Promise<{ port: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'services/api/src/main.ts')], {
    env: {
      ...process.env,
      MODE: 'hosted',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      // The capture browser must reach the SSO proxy and the API on loopback.
      PRIVATE_NETWORK_ALLOWLIST: '127.0.0.1',
      DASHBOARD_SSO_EMAIL_HEADER: SSO_EMAIL_HEADER,
      DASHBOARD_SSO_SECRET: SSO_SECRET,
      RATE_LIMIT_PER_MINUTE: '1000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.once('exit', (code) => reject(new Error(`the API exited with ${code} before listening`)));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk;
      for (const line of buffered.split('\n').slice(0, -1)) {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'Listening' && entry.port) resolve({ port: entry.port, stop });
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
  });
}

/** The deployment's authenticating proxy, reduced to what it tells the API: who the user is, and the secret. */
function startSsoProxy(apiPort: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      { host: '127.0.0.1', port: apiPort, path: req.url, method: req.method, headers: { ...req.headers, [SSO_EMAIL_HEADER]: EMAIL, 'X-Viewfinder-Proxy-Secret': SSO_SECRET } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function waitUntilReady(port: number): Promise<void> {
  for (let attempt = 0; attempt < 240; attempt++) {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the API did not become ready in 2 minutes');
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-screenshots-'));
  const { fullKey, siteId } = await seed(dataDir);
  const service = await startService(dataDir);
  const proxy = await startSsoProxy(service.port);
  try {
    await waitUntilReady(service.port);
    const direct = `http://127.0.0.1:${service.port}`;
    const signedIn = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    mkdirSync(OUT_DIR, { recursive: true });
    const shots: { file: string; url: string; quality?: string; fullPage?: boolean }[] = [
      { file: 'dashboard-sign-in.png', url: `${direct}/dashboard/sign-in` },
      { file: 'dashboard-sites.png', url: `${signedIn}/dashboard/sites`, fullPage: true },
      { file: 'dashboard-keys.png', url: `${signedIn}/dashboard/keys`, fullPage: true },
      { file: 'dashboard-try.png', url: `${signedIn}/dashboard/try` },
      { file: 'dashboard-sites-mobile.png', url: `${signedIn}/dashboard/sites`, quality: 'mobile' },
      // Last, so that the captures above appear in it.
      { file: 'dashboard-usage.png', url: `${signedIn}/dashboard/usage`, fullPage: true },
    ];
    for (const shot of shots) {
      const response = await fetch(`${direct}/api/screenshot`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': fullKey },
        body: JSON.stringify({ url: shot.url, site_id: siteId, quality: shot.quality ?? 'standard', fullPage: shot.fullPage ?? false, removeAds: false }),
      });
      const body = (await response.json()) as { image?: string; error?: string; width?: number; height?: number };
      if (!response.ok || !body.image) throw new Error(`capturing ${shot.url} answered ${response.status}: ${body.error}`);
      writeFileSync(path.join(OUT_DIR, shot.file), Buffer.from(body.image.replace(/^data:image\/png;base64,/, ''), 'base64'));
      console.log(`${path.relative(ROOT, path.join(OUT_DIR, shot.file))}: ${body.width}x${body.height}`);
    }
  } finally {
    proxy.close();
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
