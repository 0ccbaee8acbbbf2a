import type { Logger } from '../../../../lib/logger.ts';
import type { CaptureRequest, CaptureResult } from '../../../renderer/src/renderer.ts';
import { recordCacheLookup } from './metrics.ts';
import { cacheKey, entryOf, resultOf, type CacheScope, type ResultCache } from './result-cache.ts';

/** What one request asks of the cache: its cacheTtl and whose entries it may see. */
export interface CachePolicy {
  /** Undefined when the API runs without a cache (some tests): every lookup is a miss. */
  cache: ResultCache | undefined;
  ttlSeconds: number;
  scope: CacheScope;
  logger: Logger;
}

/**
 * Answers from the cache when an entry for the same normalized request is younger than the
 * request's cacheTtl; otherwise renders and stores the result. `cached` is undefined when the
 * request did not ask for the cache (cacheTtl 0), so that such answers stay exactly as they were.
 * A request with a report is never answered from the cache nor stored: the report measures this
 * visit, and an entry holds no report. Nor is a request with steps: its journey report and pictures
 * are of this visit too, and what it typed (a password) must not become part of a stored key. A cache that fails is logged and bypassed: the client still
 * gets its screenshot.
 */
export async function captureThroughCache(
  policy: CachePolicy | undefined,
  request: CaptureRequest,
  render: () => Promise<CaptureResult>,
): Promise<{ result: CaptureResult; cached?: boolean }> {
  if (!policy || policy.ttlSeconds <= 0 || request.report || request.steps) return { result: await render() };
  const { cache, ttlSeconds, scope, logger } = policy;
  const key = cacheKey(request, scope);
  const entry = await cache?.get(key).catch((err: unknown) => {
    logger.warn({ err }, 'Result cache read failed; rendering instead');
    return undefined;
  });
  if (entry && Date.now() - entry.createdAt <= ttlSeconds * 1000) {
    recordCacheLookup(true);
    return { result: resultOf(entry), cached: true };
  }
  recordCacheLookup(false);
  const result = await render();
  await cache?.put(key, entryOf(result, Date.now(), ttlSeconds)).catch((err: unknown) => logger.warn({ err }, 'Result cache write failed'));
  return { result, cached: false };
}
