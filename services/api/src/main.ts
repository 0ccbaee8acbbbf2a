import http from 'node:http';
import { ConfigError } from '../../../lib/env.ts';
import { createLogger } from '../../../lib/logger.ts';
import { createChromiumRenderer } from '../../renderer/src/pool.ts';
import { createApp } from './app.ts';
import { answerClientErrorsAsJson } from './client-errors.ts';
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

  const renderer = await createChromiumRenderer(config.renderer, logger);
  let shuttingDown = false;
  const app = createApp({ config, renderer, logger, isShuttingDown: () => shuttingDown });

  const server = http.createServer({ maxHeaderSize: config.maxHeaderBytes }, app.callback());
  answerClientErrorsAsJson(server, config.maxHeaderBytes);
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ mode: config.mode, port, auth: config.apiKey ? 'api-key' : 'none' }, 'Listening');
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
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await renderer.close();
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
