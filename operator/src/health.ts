import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/**
 * /healthz (the process serves), /readyz (every informer has listed once, so the operator acts on
 * a full picture, and the hosted API answers; true on followers too, which are ready to take over)
 * and /metrics.
 */
export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: {
  host: string;
  port: number;
  registry: Registry;
  ready(): boolean;
  /** Why the hosted API is unavailable (ApiUnavailable), or undefined while it answers. */
  apiUnavailable(): Promise<string | undefined>;
  leader(): boolean;
}): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(405, JSON.stringify({ success: false, error: 'Method not allowed: use GET' }));
    }
    if (path === '/healthz') return send(200, JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      if (!options.ready()) return send(503, JSON.stringify({ success: false, error: 'Not ready: the informers have not listed yet' }));
      options.apiUnavailable().then(
        (reason) =>
          reason === undefined
            ? send(200, JSON.stringify({ status: 'ready', leader: options.leader() }))
            : send(503, JSON.stringify({ success: false, reason: 'ApiUnavailable', error: `Not ready: ${reason}` })),
        (err: unknown) => send(500, JSON.stringify({ success: false, error: `Readiness check failed: ${String(err)}` })),
      );
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => send(200, text, options.registry.contentType),
        (err: unknown) => send(500, JSON.stringify({ success: false, error: `Metrics failed: ${String(err)}` })),
      );
      return;
    }
    send(404, JSON.stringify({ success: false, error: 'Not found: no such route' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
