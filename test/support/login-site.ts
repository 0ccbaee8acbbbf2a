import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A sign-in form on loopback for journeys (issue #41): GET /login shows it, its POST sets a session
 * cookie and redirects to /account (the page behind the login) when the user is ada with `password`,
 * and back to /login?failed=1 otherwise; /account without the cookie redirects to /login. `logins`
 * records each attempt (the user and whether it went through, never the password typed).
 */
export interface LoginSite {
  origin: string;
  logins: { user: string; ok: boolean }[];
  close(): Promise<void>;
}

export async function startLoginSite(password: string, host = '127.0.0.1'): Promise<LoginSite> {
  const session = `session-${Math.random().toString(36).slice(2)}`;
  const logins: LoginSite['logins'] = [];
  const page = (body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body style="font:16px sans-serif">${body}</body></html>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const signedIn = (req.headers.cookie ?? '').split(/;\s*/).includes(`session=${session}`);
    if (url.pathname === '/login' && req.method === 'POST') {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const ok = form.get('user') === 'ada' && form.get('password') === password;
        logins.push({ user: form.get('user') ?? '', ok });
        res.writeHead(303, ok ? { location: '/account', 'set-cookie': `session=${session}; Path=/; HttpOnly` } : { location: '/login?failed=1' }).end();
      });
      return;
    }
    if (url.pathname === '/login') {
      const failed = url.searchParams.has('failed') ? '<p id="failed">Wrong password</p>' : '';
      return res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(page(`<form method="post" action="/login"><input id="user" name="user"><input id="password" name="password" type="password"><button id="go">Sign in</button></form>${failed}`));
    }
    if (url.pathname === '/account') {
      if (!signedIn) return res.writeHead(303, { location: '/login' }).end();
      return res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1 id="welcome">Welcome, ada</h1>'));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  return { origin, logins, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}
