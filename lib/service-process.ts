/**
 * What every service's main.ts does around its app: read the config or exit 2, listen, and on
 * SIGTERM/SIGINT stop taking connections, finish the requests in flight, release resources, exit 0.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { ConfigError, readInt, readString, type Env } from './env.ts';
import { answerClientErrorsAsJson } from './http/client-errors.ts';
import type { Logger } from './logger.ts';
import { stopTracing } from './tracing.ts';

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

/** What every HTTP service reads: where it listens, its request limits, shutdown and logging. */
export interface HttpServiceConfig {
  host: string;
  port: number;
  bodyLimitBytes: number;
  maxHeaderBytes: number;
  /** How long SIGTERM waits for requests in flight, after the drain grace, before exiting 1 regardless. */
  shutdownTimeoutMs: number;
  /**
   * After SIGTERM, how long the server keeps its listener and its idle keep-alive sockets open,
   * answering every request with Connection: close, before it closes what is still idle.
   */
  drainGraceMs: number;
  logLevel: string;
}

/** `portVariable` differs per service (PORT, RENDERER_PORT) so that both can run on one machine. */
export function loadHttpServiceConfig(env: Env, portVariable: string, defaultPort: number): HttpServiceConfig {
  return {
    host: readString(env, 'HOST', '0.0.0.0'),
    port: readInt(env, portVariable, defaultPort, { min: 0, max: 65_535 }),
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 64 * 1024, { min: 1024, max: 10 * 1024 * 1024 }),
    maxHeaderBytes: readInt(env, 'MAX_HEADER_BYTES', 16 * 1024, { min: 1024, max: 64 * 1024 }),
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 60_000, { min: 0 }),
    drainGraceMs: readInt(env, 'DRAIN_GRACE_MS', 5000, { min: 0, max: 120_000 }),
    logLevel: readString(env, 'LOG_LEVEL', 'info'),
  };
}

export interface ServiceOptions {
  config: HttpServiceConfig;
  logger: Logger;
  /** Extra fields for the "Listening" line (never a secret). */
  describe: Record<string, unknown>;
  /** Builds the app; `isShuttingDown` turns true when a signal arrives, for /readyz. */
  createApp(isShuttingDown: () => boolean): Koa;
  /** Runs once every request in flight has been answered. */
  close(): Promise<void>;
}

export function runService(options: ServiceOptions): http.Server {
  const { logger, config } = options;
  let shuttingDown = false;
  const app = options.createApp(() => shuttingDown);
  // Idle keep-alive sockets outlive a load balancer's idle timeout (often 60 s) and the API's own
  // idle timeout toward renderers (4 s), so that the client, never the server, closes an idle
  // socket: no request is written onto a socket the server is closing at that moment.
  const server = http.createServer({ maxHeaderSize: config.maxHeaderBytes, keepAliveTimeout: 65_000 }, app.callback());
  answerClientErrorsAsJson(server, config.maxHeaderBytes);
  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ ...options.describe, port }, 'Listening');
  });

  // Responses not yet begun, so that a drain can still tell their clients to close the socket.
  const unanswered = new Set<http.ServerResponse>();
  server.on('request', (_req, res: http.ServerResponse) => {
    if (shuttingDown) return void res.setHeader('Connection', 'close');
    unanswered.add(res);
    res.once('close', () => unanswered.delete(res));
  });

  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal, graceMs: config.drainGraceMs }, 'Shutting down: finishing requests in flight');
    // Clients keep sending on their pooled keep-alive sockets (a Service's connections stay with
    // this pod after the preStop sleep). A socket the server closes while a client writes a request
    // onto it fails that request (ECONNRESET, undici's UND_ERR_SOCKET), and since Node 19
    // server.close() closes every idle socket at once. So for the grace the server closes nothing:
    // it keeps listening, and every answer, including those of requests in flight, says
    // Connection: close, which ends its socket cleanly. Only sockets idle through the whole grace
    // (clients that sent nothing meanwhile) are closed after it.
    for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
    unanswered.clear();
    // Ctrl-C at a terminal (SIGINT) has no clients to let go of: no grace.
    if (signal === 'SIGTERM') await new Promise((resolve) => setTimeout(resolve, config.drainGraceMs));
    const forced = setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'Shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    forced.unref();
    // Stops listening, closes the idle sockets; the callback fires once every request in flight has been answered.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await options.close();
    // The spans of the last requests and of the shutdown itself (lib/tracing.ts; nothing when off).
    await stopTracing();
    logger.info('Shut down cleanly');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return server;
}
