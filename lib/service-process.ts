/**
 * What every service's main.ts does around its app: read the config or exit 2, listen, and on
 * SIGTERM/SIGINT stop taking connections, finish the requests in flight, release resources, exit 0.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { ConfigError } from './env.ts';
import type { Logger } from './logger.ts';

export function loadConfigOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`viewfinder: invalid configuration: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

export interface ServiceOptions {
  host: string;
  port: number;
  maxHeaderBytes: number;
  /** How long a signal waits for requests in flight before exiting 1 regardless. */
  shutdownTimeoutMs: number;
  logger: Logger;
  /** Extra fields for the "Listening" line (never a secret). */
  describe: Record<string, unknown>;
  /** Builds the app; `isShuttingDown` turns true when a signal arrives, for /readyz. */
  createApp(isShuttingDown: () => boolean): Koa;
  /** Runs once every request in flight has been answered. */
  close(): Promise<void>;
}

export function runService(options: ServiceOptions): http.Server {
  const { logger } = options;
  let shuttingDown = false;
  const app = options.createApp(() => shuttingDown);
  const server = http.createServer({ maxHeaderSize: options.maxHeaderBytes }, app.callback());
  // Longer than a client's idle keep-alive (remote-renderer.ts uses 4 s), so that the client, not
  // the server, closes an idle connection and no request is written onto a socket being closed.
  server.keepAliveTimeout = 10_000;
  server.listen(options.port, options.host, () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ ...options.describe, port }, 'Listening');
  });

  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'Shutting down: finishing requests in flight');
    const forced = setTimeout(() => {
      logger.error({ timeoutMs: options.shutdownTimeoutMs }, 'Shutdown timed out; exiting');
      process.exit(1);
    }, options.shutdownTimeoutMs);
    forced.unref();
    // Stop accepting connections; the callback fires once every request in flight has been answered.
    // A kept-alive connection goes idle only once its response is sent: close those as they do, not
    // after keepAliveTimeout.
    const closeIdle = setInterval(() => server.closeIdleConnections(), 100);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearInterval(closeIdle);
    await options.close();
    logger.info('Shut down cleanly');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return server;
}
