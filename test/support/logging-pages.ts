import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { page } from './fixture-server.ts';

/**
 * Pages that log when each request for them started and ended, per full URL, to tell whether one capture ran twice at once.
 * On loopback, or on `host` (the real node's bridge address, where its pods reach the host).
 */
export async function startLoggingPages(host = '127.0.0.1') {
  const log = new Map<string, { start: number; end: number }[]>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (!url.pathname.startsWith('/page/')) {
      res.writeHead(404).end();
      return;
    }
    const entry = { start: Date.now(), end: Number.POSITIVE_INFINITY };
    log.set(url.pathname, [...(log.get(url.pathname) ?? []), entry]);
    const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end(page(`<h1>${url.pathname}</h1>`)), Number(url.searchParams.get('delay') ?? 0));
    res.once('close', () => {
      clearTimeout(timer);
      entry.end = Date.now();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name: string, delayMs = 0) => `http://${host}:${port}/page/${name}?delay=${delayMs}`,
    requests: (name: string) => log.get(`/page/${name}`) ?? [],
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
