/**
 * The API's own spans around its ports (lib/tracing.ts; docs/operations.md, "Tracing"): the dispatch
 * of a capture to a renderer, each HTTP exchange with a remote renderer, and the result cache. Each
 * wrapper is one check and the call as it is when tracing is off. Attributes hold only what is safe
 * to show anyone who reads traces: never a header, a cookie, a credential or an option's value that
 * may be one (the url without its userinfo, the profile, the format).
 */
import { HttpError } from '../../../lib/errors.ts';
import { inSpan, safeUrl, tracingOn } from '../../../lib/tracing.ts';
import { captureSpanAttributes } from '../../renderer/src/capture/phase-spans.ts';
import { CAPTURE_PATH } from '../../renderer/src/protocol.ts';
import type { Renderer } from '../../renderer/src/renderer.ts';
import type { ResultCache } from './result-cache/result-cache.ts';

/** `viewfinder.dispatch` around every capture handed to `renderer` (`where`: in-process or remote). */
export function traceDispatch(renderer: Renderer, where: 'in-process' | 'remote'): Renderer {
  return {
    isReady: () => renderer.isReady(),
    stats: () => renderer.stats(),
    close: () => renderer.close(),
    capture: (request, options) =>
      tracingOn()
        ? inSpan('viewfinder.dispatch', { 'viewfinder.renderer': where, ...captureSpanAttributes(request) }, () => renderer.capture(request, options))
        : renderer.capture(request, options),
  };
}

/** One capture sent to the renderer at `base`, as the semantic conventions' HTTP client span `POST`. */
export function tracedExchange<T>(base: URL, exchange: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return exchange();
  const url = new URL(CAPTURE_PATH.slice(1), base);
  const attributes = { 'http.request.method': 'POST', 'url.full': safeUrl(url.href), 'server.address': url.hostname, 'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
  return inSpan(
    'POST',
    attributes,
    async (span) => {
      try {
        const result = await exchange();
        span.setAttributes({ 'http.response.status_code': 200 });
        return result;
      } catch (err) {
        if (err instanceof HttpError) span.setAttributes({ 'http.response.status_code': err.status });
        throw err;
      }
    },
    { kind: 'client' },
  );
}

/** `viewfinder.result_cache.get` (with viewfinder.cache.hit) and `.put` around the result cache's reads and writes. */
export function traceResultCache(cache: ResultCache): ResultCache {
  return {
    get: (key) =>
      tracingOn()
        ? inSpan('viewfinder.result_cache.get', undefined, async (span) => {
            const entry = await cache.get(key);
            span.setAttributes({ 'viewfinder.cache.hit': entry !== undefined });
            return entry;
          })
        : cache.get(key),
    put: (key, entry) => (tracingOn() ? inSpan('viewfinder.result_cache.put', { 'viewfinder.cache.bytes': entry.image.byteLength }, () => cache.put(key, entry)) : cache.put(key, entry)),
    sizeBytes: () => cache.sizeBytes(),
    close: () => cache.close(),
  };
}
