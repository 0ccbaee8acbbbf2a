import http from 'node:http';
import { ConfigError } from '../../../lib/env.ts';
import { createLogger } from '../../../lib/logger.ts';
import { describeStore, openStore } from '../../../lib/store/open.ts';
import { createChromiumRenderer } from '../../renderer/src/pool.ts';
import { createApp } from './app.ts';
import { loadApiConfig, type ApiConfig } from './config.ts';

async function main(): Promise<void> {
  let config: ApiConfig;
  try {
    config = loadApiConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`viewfinder: invalid configuration: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel, name: 'viewfinder-api' });

  const store = config.mode === 'hosted' ? await openStore(config.store) : undefined;
  if (store) logger.info({ store: describeStore(config.store) }, 'Opened the store');
  const renderer = await createChromiumRenderer(config.renderer, logger);
  let shuttingDown = false;
  const app = createApp({ config, renderer, logger, store, isShuttingDown: () => shuttingDown });

  // Idle keep-alive sockets outlive a load balancer's idle timeout (often 60 s), so the balancer never
  // reuses a socket the service is closing at that moment (a reset the client would see).
  const server = http.createServer({ maxHeaderSize: config.maxHeaderBytes, keepAliveTimeout: 65_000 }, app.callback());
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ mode: config.mode, port, auth: config.mode === 'hosted' ? 'hosted-keys' : config.apiKey ? 'api-key' : 'none' }, 'Listening');
  });

  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'Shutting down: finishing captures in flight');
    const forced = setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'Shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    forced.unref();
    // Stop accepting connections; the callback fires once every request in flight has been answered.
    // Keep-alive sockets go as soon as they fall idle, rather than after keepAliveTimeout.
    const closeIdle = setInterval(() => server.closeIdleConnections(), 100);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearInterval(closeIdle);
    await renderer.close();
    await store?.close();
    logger.info('Shut down cleanly');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error('viewfinder: failed to start:', err);
  process.exit(1);
});
