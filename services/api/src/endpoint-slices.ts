/**
 * Renderer discovery inside Kubernetes: the ready endpoints of the renderer Service, read from its
 * EndpointSlices (label kubernetes.io/service-name) in the API's own namespace, through the
 * project's informer (lib/k8s: list, then watch on @kubernetes/client-node's Watch, relist on 410,
 * jittered backoff). The chart grants only get/list/watch on endpointslices there.
 *
 * An endpoint counts when it is ready and not terminating: a pod that starts terminating leaves the
 * list in the same watch event, before its SIGTERM has even arrived, so it gets no new capture.
 */
import { DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from '@kubernetes/client-node';
import { Informer } from '../../../lib/k8s/informer.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { RendererEndpoints } from './renderer-endpoints.ts';

export interface EndpointSliceDiscoveryOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The renderer Service's name. */
  service: string;
  /** The Service port's name; the renderers' container port behind it is what the slices list. */
  portName: string;
  logger: Logger;
  resyncMs?: number;
}

/** Base URLs of the ready, not terminating endpoints, in a stable order. */
export function readyRendererUrls(slices: readonly V1EndpointSlice[], portName: string): URL[] {
  const urls = new Set<string>();
  for (const slice of slices) {
    const port = slice.ports?.find((p) => (p.name ?? '') === portName)?.port;
    if (port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      // Kubernetes: a nil `ready` means true, a nil `terminating` means false.
      if (endpoint.conditions?.ready === false || endpoint.conditions?.terminating === true) continue;
      const address = endpoint.addresses[0];
      if (address === undefined) continue;
      // IPv4 and FQDN addresses go into a URL as they are; IPv6 needs brackets.
      const host = slice.addressType === 'IPv6' ? `[${address}]` : address;
      urls.add(`http://${host}:${port}/`);
    }
  }
  return [...urls].sort().map((url) => new URL(url));
}

export async function watchRendererEndpointSlices(options: EndpointSliceDiscoveryOptions): Promise<RendererEndpoints> {
  const { namespace, service, portName } = options;
  const api = options.kubeConfig.makeApiClient(DiscoveryV1Api);
  const labelSelector = `kubernetes.io/service-name=${service}`;
  const listeners: Array<() => void> = [];
  let urls: URL[] = [];
  const recompute = () => {
    const next = readyRendererUrls(informer.list(), portName);
    if (next.map(String).join() === urls.map(String).join()) return;
    urls = next;
    options.logger.info({ service, namespace, renderers: urls.length }, 'Renderer endpoints changed');
    for (const listener of listeners) listener();
  };
  const informer: Informer<V1EndpointSlice> = new Informer<V1EndpointSlice>({
    name: `EndpointSlice ${namespace}/${service}`,
    kubeConfig: options.kubeConfig,
    list: async () => {
      const list = await api.listNamespacedEndpointSlice({ namespace, labelSelector });
      return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
    },
    watchPath: `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`,
    labelSelector,
    resyncMs: options.resyncMs ?? 5 * 60_000,
    logger: options.logger,
    handlers: { onUpsert: recompute, onDelete: recompute, onResync: () => undefined },
  });
  await informer.start();
  recompute();
  return {
    current: () => urls,
    onChange: (listener) => void listeners.push(listener),
    close: () => informer.stop(),
  };
}
