/** The renderer service: loadConfig → pool → HTTP server → listen; on SIGTERM it drains. */
import { createLogger } from '../../../lib/logger.ts';
import { createRegistry } from '../../../lib/metrics.ts';
import { loadConfigOrExit, runService } from '../../../lib/service-process.ts';
import { checkTracingEnv, startTracing } from '../../../lib/tracing.ts';
import packageJson from '../../../package.json' with { type: 'json' };
import { loadRendererServiceConfig } from './config.ts';
import { instrumentRenderer } from './metrics.ts';
import { createChromiumRenderer } from './pool.ts';
import { createRendererServer } from './server.ts';

const config = loadConfigOrExit(() => loadRendererServiceConfig(process.env));
loadConfigOrExit(() => checkTracingEnv(process.env));
const logger = createLogger({ level: config.logLevel, name: 'viewfinder-renderer' });

try {
  if (await startTracing('viewfinder-renderer', packageJson.version)) logger.info('Tracing: spans go to the OTLP endpoint of OTEL_EXPORTER_OTLP_*');
  const registry = createRegistry();
  const renderer = instrumentRenderer(await createChromiumRenderer(config.renderer, logger), registry);
  runService({
    config,
    logger,
    describe: { service: 'renderer', concurrency: config.renderer.concurrency, auth: config.token ? 'token' : 'none' },
    createApp: (isShuttingDown) =>
      createRendererServer({ renderer, registry, logger, token: config.token, bodyLimitBytes: config.bodyLimitBytes, isShuttingDown }),
    close: () => renderer.close(),
  });
} catch (err) {
  console.error('viewfinder-renderer: failed to start:', err);
  process.exit(1);
}
