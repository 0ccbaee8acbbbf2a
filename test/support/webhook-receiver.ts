import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver on loopback that records every delivery and answers from a script of statuses. */
export interface WebhookReceiver {
  url: string;
  port: number;
  deliveries: { headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/** `statuses` are answered in order; once used up, every later delivery gets `then`. */
export async function startWebhookReceiver(options: { statuses?: number[]; then?: number; host?: string } = {}): Promise<WebhookReceiver> {
  const script = [...(options.statuses ?? [])];
  const deliveries: WebhookReceiver['deliveries'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      res.statusCode = script.shift() ?? options.then ?? 200;
      res.end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hooks/viewfinder`,
    port,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
