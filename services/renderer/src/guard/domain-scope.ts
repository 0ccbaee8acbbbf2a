import type { Frame, Page, Protocol } from 'puppeteer-core';
import { domainRefusal, hostMatches, hostOfUrl } from '../../../../lib/domains.ts';
import { Forbidden } from '../../../../lib/errors.ts';

/**
 * A restricted key's allowed domains (SPEC 2.6) hold for every page the capture shows, not only for
 * the URL it asked for: otherwise an open redirect on an allowed domain, or a page there that sends
 * the browser elsewhere, would capture any site.
 *
 * "Shows" means what the main frame loads: each hop of a redirect chain, a scripted location change,
 * a meta refresh, a form submission, a link followed. Every document request of the page pauses on a
 * DevTools session of its own; the main frame's go on only when their host is allowed, and the
 * others are failed before they leave the browser, so a foreign server never sees them.
 * Subresources are not paused at all, and iframes' documents go on at once: CDNs, fonts, images and
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

/** Throws when `url` itself is outside the domains; the renderer's own check before it navigates. */
export function checkUrlInScope(url: string, allowedDomains: readonly string[]): void {
  const host = hostOfUrl(url);
  if (host === undefined || !hostMatches(host, allowedDomains)) throw new Forbidden(domainRefusal(host));
}

export async function enforceDomainScope(page: Page, allowedDomains: readonly string[]): Promise<DomainScope> {
  let refusal: Forbidden | undefined;
  const refuse = (url: string) => {
    const host = hostOfUrl(url);
    refusal ??= new Forbidden(domainRefusal(host, 'the page navigated there'));
  };
  const inScope = (url: string) => {
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
  session.on('Fetch.requestPaused', ({ requestId, request, frameId }: Protocol.Fetch.RequestPausedEvent) => {
    const allowed = childFrames.has(frameId) || inScope(request.url);
    if (!allowed) refuse(request.url);
    const answer = allowed
      ? session.send('Fetch.continueRequest', { requestId })
      : session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
    // The page may close with the request paused; nothing then waits for the answer.
    answer.catch(() => undefined);
  });
  // Sent together rather than one after another: on a loaded machine every round trip counts.
  const [, { frameTree }] = await Promise.all([
    session.send('Page.enable'),
    session.send('Page.getFrameTree'),
    session.send('Fetch.enable', { patterns: [{ urlPattern: '*', resourceType: 'Document', requestStage: 'Request' }] }),
  ]);
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
