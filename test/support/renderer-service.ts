import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Registry } from 'prom-client';
import type { Logger } from '../../lib/logger.ts';
import { createRegistry } from '../../lib/metrics.ts';
import { instrumentRenderer } from '../../services/renderer/src/metrics.ts';
import type { Renderer } from '../../services/renderer/src/renderer.ts';
import { createRendererServer } from '../../services/renderer/src/server.ts';
import { silentLogger } from './harness.ts';

/** The renderer service's HTTP API over a real pool, listening on an ephemeral loopback port. */
export interface RendererService {
  app: Koa;
  url: string;
  /** Holds the capture metrics of this service only. */
  registry: Registry;
  shutDown(): void;
  /** Closes the listener (the pool stays up: it is shared). */
  close(): Promise<void>;
}

export async function startRendererService(pool: Renderer, options: { token?: string; logger?: Logger; port?: number } = {}): Promise<RendererService> {
  const registry = createRegistry({ processMetrics: false });
  let shuttingDown = false;
  const app = createRendererServer({
    renderer: instrumentRenderer(pool, registry),
    registry,
    logger: options.logger ?? silentLogger,
    token: options.token,
    bodyLimitBytes: 64 * 1024,
    isShuttingDown: () => shuttingDown,
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    registry,
    shutDown: () => {
      shuttingDown = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The value of one sample (`name` may end in _count/_sum/_bucket) whose labels include `labels`. */
export async function sampleValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const value of metric.values as { value: number; labels: Record<string, string | number>; metricName?: string }[]) {
      if ((value.metricName ?? metric.name) !== name) continue;
      if (Object.entries(labels).every(([key, wanted]) => String(value.labels[key]) === wanted)) return value.value;
    }
  }
  return undefined;
}
