import { extractFeaturesFromDOM } from '@ghostery/adblocker-content';
import { Request, type PuppeteerBlocker } from '@ghostery/adblocker-puppeteer';
import type { Frame, Page } from 'puppeteer-core';

/**
 * Puppeteer's cooperative interception: every handler answers with a priority, and at equal priority
 * abort beats respond beats continue. Giving the blocker one lets a later handler on the same page
 * (the network guard) coexist with it instead of failing with "request is already handled".
 */
const INTERCEPT_PRIORITY = 0;

export interface AdBlocking {
  /** Hides what the cosmetic rules match in every frame's current DOM; awaited, so the screenshot sees it. */
  hideAds(): Promise<void>;
}

/** Prepares a shared blocker once per process. */
export function prepareBlocker(blocker: PuppeteerBlocker): PuppeteerBlocker {
  blocker.setRequestInterceptionPriority(INTERCEPT_PRIORITY);
  return blocker;
}

/**
 * Network blocking for one page, and cosmetic hiding applied in two passes of our own rather than
 * through `enableBlockingInPage`'s: its cosmetic pass runs unawaited and polls every frame's DOM
 * every 500 ms for seconds, so the screenshot could not know whether the styles were in yet.
 * Here, the generic and per-host rules go in at DOMContentLoaded (so that the page settles with the
 * ads already collapsed), and hideAds() adds the rules for classes and ids that appeared since.
 */
export async function enableAdBlocking(page: Page, blocker: PuppeteerBlocker): Promise<AdBlocking> {
  await page.setRequestInterception(true);
  page.on('request', blocker.onRequest);

  const seen = new WeakMap<Frame, FrameFeatures>();
  const hide = (frame: Frame) => hideInFrame(frame, blocker, seen).catch(() => {});
  page.on('domcontentloaded', () => void hide(page.mainFrame()));

  return {
    async hideAds() {
      await Promise.all(page.frames().map(hide));
    },
  };
}

/** What a frame's DOM has already been matched against, so a second pass only asks about what is new. */
interface FrameFeatures {
  url: string;
  ids: Set<string>;
  classes: Set<string>;
  hrefs: Set<string>;
}

async function hideInFrame(frame: Frame, blocker: PuppeteerBlocker, seen: WeakMap<Frame, FrameFeatures>): Promise<void> {
  if (frame.detached) return;
  const url = frame.url();
  if (!/^https?:/.test(url)) return;

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
  if (!active) return;
  await Promise.all([
    styles.length > 0 ? frame.addStyleTag({ content: styles }) : undefined,
    removeBlockedFrames(frame, blocker),
  ]);
}

/** An ad iframe whose request was blocked would show Chromium's "blocked" page: remove the element instead. */
async function removeBlockedFrames(frame: Frame, blocker: PuppeteerBlocker): Promise<void> {
  const sourceUrl = frame.page().url();
  const sources = await frame.evaluate(() => Array.from(document.querySelectorAll('iframe[src]'), (iframe) => (iframe as HTMLIFrameElement).src));
  const blocked = sources.filter((url) => /^https?:/.test(url) && blocker.match(Request.fromRawDetails({ url, sourceUrl, type: 'sub_frame' })).match);
  if (blocked.length === 0) return;
  await frame.evaluate((urls: string[]) => {
    for (const iframe of Array.from(document.querySelectorAll('iframe[src]'))) {
      if (urls.includes((iframe as HTMLIFrameElement).src)) iframe.remove();
    }
  }, blocked);
}

function unseen(known: Set<string>, values: string[]): string[] {
  const fresh = values.filter((value) => !known.has(value));
  for (const value of fresh) known.add(value);
  return fresh;
}
