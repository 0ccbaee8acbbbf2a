import type { HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import { CaptureFailed, Forbidden, type HttpError } from '../../../../lib/errors.ts';
import { UPSTREAM_ERROR_HEADER } from './filtering-proxy.ts';
import type { NetworkGuard } from './network-guard.ts';

/**
 * Follows the main frame's navigations so that a capture whose page went to a blocked address
 * (a redirect, a scripted navigation) answers 403 like a blocked URL would, and one whose origin
 * could not be reached answers Chromium's net error, instead of a picture of the proxy's answer.
 * The proxy blocks the traffic itself; this only names the cause.
 */
export interface NavigationWatch {
  /** Why the main frame did not show the page it asked for, if it did not. */
  failure(): Promise<HttpError | undefined>;
  stop(): void;
}

export function watchMainFrame(page: Page, firstUrl: string, guard: NetworkGuard): NavigationWatch {
  const verdicts: Promise<Forbidden | undefined>[] = [];
  const onRequest = (request: HTTPRequest) => {
    if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    if (request.url() === firstUrl && request.redirectChain().length === 0) return; // checked before navigating
    const url = URL.parse(request.url());
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return;
    verdicts.push(guard.resolve(url.hostname).then(() => undefined, (err: unknown) => (err instanceof Forbidden ? err : undefined)));
  };
  let unreachable: CaptureFailed | undefined;
  const onResponse = (response: HTTPResponse) => {
    const netError = response.headers()[UPSTREAM_ERROR_HEADER];
    if (netError && response.frame() === page.mainFrame() && response.request().isNavigationRequest()) {
      unreachable ??= new CaptureFailed(`Screenshot generation failed: net::${netError}`);
    }
  };
  page.on('request', onRequest);
  page.on('response', onResponse);
  return {
    async failure() {
      return (await Promise.all(verdicts)).find((verdict) => verdict !== undefined) ?? unreachable;
    },
    stop() {
      page.off('request', onRequest);
      page.off('response', onResponse);
    },
  };
}
