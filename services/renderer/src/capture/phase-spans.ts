/**
 * The renderer's phase spans (lib/tracing.ts; docs/operations.md, "Tracing"): the phases the capture
 * bench measures, as children of `renderer.capture`. Each wrapper is one check and the call as it is
 * when tracing is off. Attributes name the capture's shape, never what a client may keep secret
 * (headers, cookies, credentials, scripts, HTML, a URL's userinfo).
 */
import { inSpan, safeUrl, tracingOn } from '../../../../lib/tracing.ts';
import type { CaptureRequest } from '../renderer.ts';
import type { PageCleaner } from './capture-page.ts';

/** What a capture's spans say about it, in the API's dispatch span and the renderer's capture span alike. */
export function captureSpanAttributes(request: CaptureRequest) {
  return {
    'url.full': request.html === undefined ? safeUrl(request.url) : undefined,
    'viewfinder.capture.quality': request.quality,
    'viewfinder.capture.format': request.format ?? 'png',
    'viewfinder.capture.full_page': request.fullPage,
    'viewfinder.capture.remove_ads': request.removeAds,
  };
}

/** `work` as the span `name` when tracing is on; `work` as it is otherwise. */
export function phase<A extends unknown[], R>(name: string, work: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return (...args) => (tracingOn() ? inSpan(name, undefined, () => work(...args)) : work(...args));
}

/** Each removeAds pass as `renderer.remove_ads`, with viewfinder.remove_ads.pass (full, sweep) and .changed. */
export function tracePageCleaner<C extends PageCleaner>(cleaner: C): C {
  const pass = (name: 'full' | 'sweep', run: () => Promise<boolean>) =>
    inSpan('renderer.remove_ads', { 'viewfinder.remove_ads.pass': name }, async (span) => {
      const changed = await run();
      span.setAttributes({ 'viewfinder.remove_ads.changed': changed });
      return changed;
    });
  const { beforeScreenshot, sweepAgain } = cleaner;
  return {
    ...cleaner,
    beforeScreenshot: (page, area) => (tracingOn() ? pass('full', () => beforeScreenshot(page, area)) : beforeScreenshot(page, area)),
    sweepAgain: (page) => (tracingOn() ? pass('sweep', () => sweepAgain(page)) : sweepAgain(page)),
  };
}
