import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A "secret" internal service on 127.0.0.1 that counts every TCP connection and every UDP datagram
 * it receives, on the same port number. Network-guard tests assert it was never reached.
 */
export interface SecretServer {
  port: number;
  /** TCP connections accepted plus UDP datagrams received. */
  hits(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startSecretServer(): Promise<SecretServer> {
  let hits = 0;
  const server = http.createServer((_req, res) => res.end('secret'));
  server.on('connection', () => {
    hits += 1;
  });
  server.on('upgrade', (_req, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const udp = dgram.createSocket('udp4');
  udp.on('message', () => {
    hits += 1;
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, '127.0.0.1', () => resolve());
  }).catch(() => undefined); // the UDP port may be taken; TCP is what matters most
  return {
    port,
    hits: () => hits,
    reset: () => {
      hits = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        try {
          udp.close();
        } catch {
          // never bound
        }
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
