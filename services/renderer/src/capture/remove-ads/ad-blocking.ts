import { extractFeaturesFromDOM } from '@ghostery/adblocker-content';
import { Request, type PuppeteerBlocker, type RequestType } from '@ghostery/adblocker-puppeteer';
import type { CDPSession, Frame, Page, Protocol } from 'puppeteer-core';

export interface AdBlocking {
  /**
   * Hides what the cosmetic rules match in every frame's current DOM; awaited, so the screenshot
   * sees it. True when it changed the page (styles added, a blocked frame removed).
   */
  hideAds(): Promise<boolean>;
  /** Resolves once the passes already started (the one at DOMContentLoaded) have finished. */
  settled(): Promise<void>;
  /** Lets every request through unpaused and hides nothing: for a capture with removeAds off. */
  stop(): Promise<void>;
}

/**
 * Network blocking for one page, and cosmetic hiding applied in two passes of our own rather than
 * through `enableBlockingInPage`'s: its cosmetic pass runs unawaited and polls every frame's DOM
 * every 500 ms for seconds, so the screenshot could not know whether the styles were in yet.
 * Here, the generic and per-host rules go in at DOMContentLoaded (so that the page settles with the
 * ads already collapsed), and hideAds() adds the rules for classes and ids that appeared since.
 */
export async function enableAdBlocking(page: Page, blocker: PuppeteerBlocker): Promise<AdBlocking> {
  const session = await interceptRequests(page, blocker);

  const seen = new WeakMap<Frame, FrameFeatures>();
  // One pass at a time per frame: a pass that starts while the one from DOMContentLoaded still runs
  // waits for it, and then only asks about what is new.
  const passes = new WeakMap<Frame, Promise<boolean>>();
  const hide = (frame: Frame) => {
    const pass = (passes.get(frame) ?? Promise.resolve(false)).then(() => hideInFrame(frame, blocker, seen)).catch(() => false);
    passes.set(frame, pass);
    return pass;
  };
  const hideOnLoad = () => void hide(page.mainFrame());
  page.on('domcontentloaded', hideOnLoad);

  return {
    async hideAds() {
      return (await Promise.all(page.frames().map(hide))).some(Boolean);
    },
    async settled() {
      await Promise.all(page.frames().map((frame) => passes.get(frame)));
    },
    async stop() {
      page.off('domcontentloaded', hideOnLoad);
      // Nothing is paused once Fetch is off; the session itself can go later (detaching took a few ms more).
      await session.send('Fetch.disable');
      void session.detach().catch(() => undefined);
    },
  };
}

/**
 * Every request pauses on a DevTools session of our own, long enough to be matched against the lists.
 * Not puppeteer's setRequestInterception: with it, puppeteer announces a request (the `request`
 * event the smart wait counts) only once it has paused, tens of milliseconds after it started, and a
 * page that navigates or fetches from a timer looked idle in between, so it was captured too early.
 * On a session puppeteer does not know about, its events stay as prompt as without blocking, and
 * other interceptors on the page (the network guard) are left alone.
 */
async function interceptRequests(page: Page, blocker: PuppeteerBlocker): Promise<CDPSession> {
  const session = await page.createCDPSession();
  // Asked for beside Fetch.enable, not before it: one round trip less before the navigation starts.
  const mainFrameId = session.send('Page.getFrameTree').then(({ frameTree }) => frameTree.frame.id);
  session.on('Fetch.requestPaused', (event: Protocol.Fetch.RequestPausedEvent) => {
    void mainFrameId
      .then((id) => decide(session, blocker, event, id, page.url()))
      .catch(() => {
        // The page went away with the request; nothing is waiting for the answer.
      });
  });
  await Promise.all([mainFrameId, session.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] })]);
  return session;
}

async function decide(
  session: CDPSession,
  blocker: PuppeteerBlocker,
  { requestId, request, resourceType, frameId }: Protocol.Fetch.RequestPausedEvent,
  mainFrameId: string,
  pageUrl: string,
): Promise<void> {
  const isDocument = resourceType === 'Document';
  // The page itself is never blocked, whatever a list says about its address.
  if (isDocument && frameId === mainFrameId) return void (await session.send('Fetch.continueRequest', { requestId }));
  const type = (isDocument ? 'sub_frame' : resourceType.toLowerCase()) as RequestType;
  const { match, redirect } = blocker.match(Request.fromRawDetails({ url: request.url, sourceUrl: pageUrl, type }));
  if (redirect) {
    // $redirect rules answer with a harmless stand-in (an empty script, a transparent pixel).
    const base64 = redirect.contentType.endsWith(';base64');
    await session.send('Fetch.fulfillRequest', {
      requestId,
      responseCode: 200,
      responseHeaders: [{ name: 'Content-Type', value: base64 ? redirect.contentType.slice(0, -7) : redirect.contentType }],
      body: base64 ? redirect.body : Buffer.from(redirect.body).toString('base64'),
    });
  } else if (match) {
    await session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
  } else {
    await session.send('Fetch.continueRequest', { requestId });
  }
}

/** What a frame's DOM has already been matched against, so a second pass only asks about what is new. */
interface FrameFeatures {
  url: string;
  ids: Set<string>;
  classes: Set<string>;
  hrefs: Set<string>;
}

/** True when it changed the frame. */
async function hideInFrame(frame: Frame, blocker: PuppeteerBlocker, seen: WeakMap<Frame, FrameFeatures>): Promise<boolean> {
  if (frame.detached) return false;
  const url = frame.url();
  if (!/^https?:/.test(url)) return false;

  let known = seen.get(frame);
  const firstPass = known?.url !== url;
  if (!known || firstPass) {
    known = { url, ids: new Set(), classes: new Set(), hrefs: new Set() };
    seen.set(frame, known);
  }
  const found = await frame.evaluate(extractFeaturesFromDOM);
  const { hostname, domain } = Request.fromRawDetails({ url });
  const { active, styles } = blocker.getCosmeticsFilters({
    url,
    hostname,
    domain: domain ?? '',
    ids: unseen(known.ids, found.ids),
    classes: unseen(known.classes, found.classes),
    hrefs: unseen(known.hrefs, found.hrefs),
    getBaseRules: firstPass,
    getRulesFromHostname: firstPass,
    getRulesFromDOM: true,
    // Scriptlets need uBlock's resources bundle, which Debian does not ship in a form the engine reads.
    getInjectionRules: false,
    getExtendedRules: false,
  });
  if (!active) return false;
  // A blocked ad iframe is a child frame still (showing Chromium's error page): without any, there is none to remove.
  const [, framesRemoved] = await Promise.all([
    styles.length > 0 ? frame.addStyleTag({ content: styles }) : undefined,
    frame.childFrames().length > 0 ? removeBlockedFrames(frame, blocker) : false,
  ]);
  return styles.length > 0 || framesRemoved;
}

/** An ad iframe whose request was blocked would show Chromium's "blocked" page: remove the element instead. */
async function removeBlockedFrames(frame: Frame, blocker: PuppeteerBlocker): Promise<boolean> {
  const sourceUrl = frame.page().url();
  const sources = await frame.evaluate(() => Array.from(document.querySelectorAll('iframe[src]'), (iframe) => (iframe as HTMLIFrameElement).src));
  const blocked = sources.filter((url) => /^https?:/.test(url) && blocker.match(Request.fromRawDetails({ url, sourceUrl, type: 'sub_frame' })).match);
  if (blocked.length === 0) return false;
  await frame.evaluate((urls: string[]) => {
    for (const iframe of Array.from(document.querySelectorAll('iframe[src]'))) {
      if (urls.includes((iframe as HTMLIFrameElement).src)) iframe.remove();
    }
  }, blocked);
  return true;
}

function unseen(known: Set<string>, values: string[]): string[] {
  const fresh = values.filter((value) => !known.has(value));
  for (const value of fresh) known.add(value);
  return fresh;
}
