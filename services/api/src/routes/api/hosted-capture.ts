import type { Context } from 'koa';
import { domainRefusal, hostMatches, hostOfUrl, isDomainRefusal } from '../../../../../lib/domains.ts';
import { BadRequest, Forbidden, NotFound, Unauthorized } from '../../../../../lib/errors.ts';
import type { ApiKey, Site, Store } from '../../../../../lib/store/store.ts';
import type { CaptureFormat } from '../../../../renderer/src/capture/image-formats.ts';
import { restrictedOptionRefusal } from '../../../../renderer/src/guard/domain-scope.ts';
import type { Principal } from '../../auth/hosted-key.ts';
import { recordAuthFailure } from '../../metrics.ts';
import { checksOf } from '../capture-options.ts';
import { captureScreenshot, toCaptureRequest, type ScreenshotBody } from '../screenshot.ts';
import type { HostedDeps } from './route.ts';

/**
 * A hosted capture once the key is known, for POST /api/screenshot and GET /api/render alike:
 * the site (SPEC 5.2), the domain restriction, the rate limit, the capture through the site's
 * result cache, and usage. A failure is counted here; a success is counted by the caller through
 * recordCapture, with the bytes it actually sends.
 */

/** The site a request captures for: named by site_id with a full-access key, implied by a site key. */
export async function resolveSite(store: Store, key: ApiKey, siteId: string | undefined): Promise<Site> {
  if (key.kind === 'full') {
    if (siteId === undefined) {
      recordAuthFailure('site_required');
      throw new BadRequest('site_id is required with a full-access API key');
    }
    const site = await store.getSite(siteId);
    if (!site || site.accountId !== key.accountId) {
      recordAuthFailure('site_forbidden');
      throw new NotFound(`Site ${siteId} not found`);
    }
    return site;
  }
  if (siteId !== undefined && siteId !== key.siteId) {
    recordAuthFailure('site_forbidden');
    throw new Forbidden('This API key is scoped to another site: omit site_id or use its own');
  }
  const site = key.siteId === null ? null : await store.getSite(key.siteId);
  // A site key outlives its site only for an instant (MongoDB deletes the site, then its keys).
  if (!site) {
    recordAuthFailure('invalid_key');
    throw new Unauthorized();
  }
  return site;
}

/**
 * SPEC 2.6: a restricted key captures only its site's allowed domains, read now, and their
 * subdomains; and neither html nor injectJs, which could show any site (restrictedOptionRefusal).
 */
export function checkDomain(key: ApiKey, site: Site, page: { url?: string; html?: string; injectJs?: string; steps?: ScreenshotBody['steps'] }): void {
  if (!key.restrictDomains) return;
  const refusal = restrictedOptionRefusal(page);
  if (refusal) {
    recordAuthFailure('domain_forbidden');
    throw new Forbidden(refusal);
  }
  // A journey's goto steps are pages the capture shows too: refused before anything is loaded, as the URL is.
  const gotos = (page.steps ?? []).flatMap((step) => (step.action === 'goto' ? [step.url] : []));
  for (const url of [page.url ?? '', ...gotos]) {
    const host = hostOfUrl(url);
    if (host === undefined || !hostMatches(host, site.allowedDomains)) {
      recordAuthFailure('domain_forbidden');
      throw new Forbidden(domainRefusal(host, undefined, site.id));
    }
  }
}

export interface HostedCapture {
  /** The validated options, as the client gave them. */
  given: ScreenshotBody;
  siteId: string | undefined;
  /**
   * Run once the key may capture (site, domain, rate limit): the options to capture with, and the
   * format to answer as raw bytes, if any (POST /api/screenshot reads it from Accept).
   */
  chooseFormat(): { body: ScreenshotBody; raw: CaptureFormat | undefined };
  /** performance.now() when the request arrived. */
  started: number;
  /** Run after chooseFormat, before the capture: what must hold for it to be of any use (a storage destination that can be reached). */
  beforeCapture?: () => Promise<void>;
}

export async function captureForKey(deps: HostedDeps, ctx: Context, { key, account }: Principal, request: HostedCapture) {
  const { store, renderer, limiter, logger, resultCache } = deps;
  const site = await resolveSite(store, key, request.siteId);
  checkDomain(key, site, request.given);
  await limiter.consume(ctx, key.id, account.rateLimitPerMinute);
  const { body, raw } = request.chooseFormat();
  await request.beforeCapture?.();

  const usage = { accountId: account.id, siteId: site.id, keyId: key.id };
  let answer: Awaited<ReturnType<typeof captureScreenshot>>;
  try {
    // The domains travel with the capture, so that the renderer holds every page it loads to them.
    const scope = key.restrictDomains ? { allowedDomains: site.allowedDomains } : {};
    // Sites never share entries: the site is part of the key.
    const policy = { cache: resultCache, ttlSeconds: body.cacheTtl ?? 0, scope: { mode: 'hosted', siteId: site.id } as const, logger };
    answer = await captureScreenshot(ctx, renderer, { ...toCaptureRequest(body), ...scope }, request.started, policy, checksOf(body));
  } catch (err) {
    // The page went outside the domains: the same refusal as for the URL, found later.
    if (isDomainRefusal(err)) recordAuthFailure('domain_forbidden');
    await store.recordUsage({ ...usage, outcome: 'failure', bytes: 0 }).catch((usageErr: unknown) => logger.error({ err: usageErr }, 'Failed to record usage'));
    throw err;
  }
  return {
    answer: { ...answer, body: { ...answer.body, site_id: site.id } },
    raw,
    recordCapture: (bytes: number) => store.recordUsage({ ...usage, outcome: 'capture', bytes }),
    /** A capture made but not delivered (its upload failed) counts as a failure. */
    recordFailure: () => store.recordUsage({ ...usage, outcome: 'failure', bytes: 0 }).catch((usageErr: unknown) => logger.error({ err: usageErr }, 'Failed to record usage')),
  };
}
