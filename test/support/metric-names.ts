import type { Registry } from 'prom-client';
import { createRegistry } from '../../lib/metrics.ts';
import { apiRegistry } from '../../services/api/src/metrics.ts';
// Registers the monitors' metrics in apiRegistry, as app.ts does.
import '../../services/api/src/monitors/metrics.ts';
import { instrumentRenderer } from '../../services/renderer/src/metrics.ts';
import { createRendererServer } from '../../services/renderer/src/server.ts';
import { sharedRenderer, silentLogger } from './harness.ts';

/**
 * Every sample name the two services can expose, read from their real registries: the API's, and a
 * renderer service's (process metrics, capture metrics, HTTP metrics). Histograms expand to their
 * _bucket, _sum and _count samples, summaries to _sum and _count.
 */
export async function exposedSampleNames(): Promise<Set<string>> {
  const rendererRegistry = createRegistry();
  const renderer = instrumentRenderer(await sharedRenderer(), rendererRegistry);
  createRendererServer({ renderer, registry: rendererRegistry, logger: silentLogger, token: undefined, bodyLimitBytes: 1024 });
  const names = new Set<string>();
  for (const registry of [apiRegistry, rendererRegistry] as Registry[]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
      if (String(metric.type) === 'summary') for (const suffix of ['_sum', '_count']) names.add(metric.name + suffix);
    }
  }
  return names;
}

/** The viewfinder_* sample names a PromQL expression reads. */
export function viewfinderNamesIn(expr: string): string[] {
  return [...new Set(expr.match(/\bviewfinder_[a-z0-9_]+/g) ?? [])];
}
