/**
 * Where the renderers are. The remote renderer asks this for the base URLs that may take captures
 * now and hears when they change: a fixed list outside Kubernetes (RENDERER_URL), or the ready
 * endpoints of the renderer Service's EndpointSlices inside it (endpoint-slices.ts).
 */
export interface RendererEndpoints {
  /** Base URLs (ending in "/") of the renderers that may take new captures. */
  current(): URL[];
  /** Called after every change of current(). */
  onChange(listener: () => void): void;
  close(): void;
}

export function staticEndpoints(urls: URL[]): RendererEndpoints {
  return { current: () => urls, onChange: () => undefined, close: () => undefined };
}
