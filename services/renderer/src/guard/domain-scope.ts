import type { Frame, Page, Protocol } from 'puppeteer-core';
import { domainRefusal, hostMatches, hostOfUrl } from '../../../../lib/domains.ts';
import { Forbidden } from '../../../../lib/errors.ts';
import { withHeaders, type RequestRules } from './request-rules.ts';

/**
 * A restricted key's allowed domains (SPEC 2.6) hold for every page the capture shows, not only for
 * the URL it asked for: otherwise an open redirect on an allowed domain, or a page there that sends
 * the browser elsewhere, would capture any site.
 *
 * "Shows" means what the main frame loads: each hop of a redirect chain, a scripted location change,
 * a meta refresh, a form submission, a link followed. Every document request of the page pauses on a
 * DevTools session of its own; the main frame's go on only when their host is allowed, and the
 * others are failed before they leave the browser, so a foreign server never sees them.
 * Subresources are not paused for the domains (only a capture's request rules pause them), and iframes' documents go on at once: CDNs, fonts, images and
 * embeds stay allowed. history.pushState loads nothing (and only within the page's own origin).
 * Pop-ups are blocked by Chromium and closed by prepare-page.ts; they are never captured.
 *
 * A commit outside the domains that no request announced (a document served from a cache or a
 * prefetch) is refused too: the capture fails rather than return that picture.
 */
export interface DomainScope {
  /** Why the capture must not be returned: the main frame went, or tried to go, outside the domains. */
  refusal(): Forbidden | undefined;
  /** Stops watching; the session is let go in the background, since the page is done with. */
  stop(): void;
}

/**
 * What a restricted key may not send: content of the client's own in place of the allowed site's.
 * html belongs to no domain, and a script can rewrite an allowed page into any other (an iframe of
 * any site fills it): either would let a key exposed in a web page capture anything.
 */
export function restrictedOptionRefusal(
  request: { html?: string; injectJs?: string },
  restriction = { by: 'a domain-restricted key', wayOut: 'use an unrestricted key' },
): string | undefined {
  const { by, wayOut } = restriction;
  if (request.html !== undefined) return `html cannot be captured with ${by}: the document belongs to no domain; ${wayOut}`;
  if (request.injectJs !== undefined) return `injectJs cannot be used with ${by}: a script can make the page show any site; ${wayOut}`;
  return undefined;
}

/** Throws when `url` itself is outside the domains; the renderer's own check before it navigates. */
export function checkUrlInScope(url: string, allowedDomains: readonly string[], options: { html?: string; injectJs?: string } = {}): void {
  const refusal = restrictedOptionRefusal(options);
  if (refusal) throw new Forbidden(refusal);
  const host = hostOfUrl(url);
  if (host === undefined || !hostMatches(host, allowedDomains)) throw new Forbidden(domainRefusal(host));
}

/**
 * Pauses the page's requests on one DevTools session of its own, for what needs to judge them before
 * they leave the browser: a restricted key's domains (the main frame's documents), and a capture's
 * request rules (request-rules.ts: blocked resources, credentials for the URL's origin). Either may
 * be absent; with neither, the caller does not call this, and nothing is paused.
 */
export async function interceptRequests(page: Page, allowedDomains: readonly string[] | undefined, rules?: RequestRules): Promise<DomainScope> {
  let refusal: Forbidden | undefined;
  const refuse = (url: string) => {
    const host = hostOfUrl(url);
    refusal ??= new Forbidden(domainRefusal(host, 'the page navigated there'));
  };
  const inScope = (url: string) => {
    if (!allowedDomains) return true;
    const host = hostOfUrl(url);
    return host !== undefined && hostMatches(host, allowedDomains);
  };

  const session = await page.createCDPSession();
  // Iframes are told apart from the main frame by being known children, not the main frame by its
  // id: a main frame can be swapped for another (a prerendered page's, on activation), and a
  // document of a frame nobody announced is then checked rather than let through. A frame is
  // announced on this session before any navigation of its own can start.
  const childFrames = new Set<string>();
  session.on('Page.frameAttached', ({ frameId, parentFrameId }: Protocol.Page.FrameAttachedEvent) => {
    if (parentFrameId) childFrames.add(frameId);
  });
  session.on('Fetch.requestPaused', ({ requestId, request, frameId, resourceType }: Protocol.Fetch.RequestPausedEvent) => {
    const inFrame = resourceType !== 'Document' || childFrames.has(frameId) || inScope(request.url);
    if (!inFrame) refuse(request.url);
    const verdict = inFrame ? (rules?.decide(request.url, resourceType) ?? { block: false }) : { block: true as const };
    const answer = verdict.block
      ? session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' })
      : session.send('Fetch.continueRequest', { requestId, ...(verdict.headers ? { headers: withHeaders(request.headers, verdict.headers) } : {}) });
    // The page may close with the request paused; nothing then waits for the answer.
    answer.catch(() => undefined);
  });
  const patterns = [...(allowedDomains ? [{ urlPattern: '*', resourceType: 'Document' as const, requestStage: 'Request' as const }] : []), ...(rules?.patterns ?? [])];
  if (!allowedDomains) {
    await session.send('Fetch.enable', { patterns });
    return { refusal: () => undefined, stop: () => void session.detach().catch(() => undefined) };
  }
  // Sent together rather than one after another: on a loaded machine every round trip counts.
  const [, { frameTree }] = await Promise.all([session.send('Page.enable'), session.send('Page.getFrameTree'), session.send('Fetch.enable', { patterns })]);
  const addChildren = (tree: Protocol.Page.FrameTree) => {
    for (const child of tree.childFrames ?? []) {
      childFrames.add(child.frame.id);
      addChildren(child);
    }
  };
  addChildren(frameTree);

  const onCommit = (frame: Frame) => {
    if (frame !== page.mainFrame()) return;
    const url = frame.url();
    // about:blank and Chromium's own error page (what a refused navigation shows) hold nothing foreign.
    if (/^https?:/i.test(url) && !inScope(url)) refuse(url);
  };
  page.on('framenavigated', onCommit);

  return {
    refusal: () => refusal,
    stop() {
      page.off('framenavigated', onCommit);
      session.detach().catch(() => undefined);
    },
  };
}
