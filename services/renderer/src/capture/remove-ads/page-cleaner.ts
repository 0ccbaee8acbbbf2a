import type { Page } from 'puppeteer-core';
import type { Logger } from '../../../../../lib/logger.ts';
import type { PageCleaner } from '../capture-page.ts';
import { enableAdBlocking, type AdBlocking } from './ad-blocking.ts';
import { COOKIE_NOTICE_LIST, loadAdblockEngine, type AdblockEngine } from './adblock-engine.ts';
import { createConsentHandling, loadConsentScripts } from './consent.ts';
import { answerNotices, answerNoticesThenSweep, hideNoticesLeft } from './notice-sweep.ts';
import { sweepOverlays } from './overlay-sweep.ts';
import { TWO_FRAMES_MAX_MS, waitAtMost } from '../wait-at-most.ts';

/** How long the screenshot waits for autoconsent to finish with a banner it found (or to look at the last DOM changes). */
const CONSENT_SETTLE_MAX_MS = 3000;
/** How long it waits for a dismissed banner's fade-out or slide-out transition. */
const TRANSITION_MAX_MS = 1000;

export interface PageCleanerOptions {
  filterListsDir: string;
  adblockCacheDir: string;
}

export interface RemoveAdsCleaner extends PageCleaner {
  /** Where the ad-blocking engine came from; `off` when no filter list is installed. */
  readonly adblock: 'cache' | 'parsed' | 'off';
}

/**
 * The ad-blocking engine removeAds uses: Debian's lists and the cookie-notice list. The image's
 * build step (docker/warm-adblock-cache.ts) calls this too, so that it caches exactly this engine.
 */
export function loadRemoveAdsEngine(options: PageCleanerOptions, log: Logger): Promise<AdblockEngine | undefined> {
  return loadAdblockEngine({ listsDir: options.filterListsDir, packagedLists: [COOKIE_NOTICE_LIST], cacheDir: options.adblockCacheDir, log });
}

/**
 * What `removeAds: true` does, built once per process: ads and trackers blocked from EasyList,
 * EasyPrivacy and uBlock's lists, and cookie notices hidden with EasyList's cookie rules; consent
 * banners opted out of with autoconsent once the page is ready; then a generic pass over the
 * overlays left. Without Debian's lists it still does all but the ad blocking.
 */
export async function createPageCleaner(options: PageCleanerOptions, logger: Logger): Promise<RemoveAdsCleaner> {
  const log = logger.child({ component: 'remove-ads' });
  const engine = await loadRemoveAdsEngine(options, log);
  const blocker = engine?.blocker;
  const consent = createConsentHandling(loadConsentScripts());
  const sessions = new WeakMap<Page, AdBlocking>();
  /** Spare pages set up for removeAds (the default) before a capture took them. */
  const prepared = new WeakSet<Page>();
  if (engine) log.info({ source: engine.source, lists: engine.lists.length }, 'Loaded the ad-blocking engine');

  const setUp = async (page: Page) => {
    // Cosmetic styles and autoconsent's prehiding are <style> elements; a strict CSP would refuse them.
    const [, adBlocking] = await Promise.all([page.setBypassCSP(true), blocker ? enableAdBlocking(page, blocker) : undefined]);
    if (adBlocking) sessions.set(page, adBlocking);
    prepared.add(page);
  };
  /** On a spare page; one that could not be set up is set up again by the capture that takes it. */
  const preparePage = (page: Page) => setUp(page).catch((err: Error) => log.debug({ err: err.message }, 'Could not prepare a spare page for removeAds'));

  /**
   * What no rule knew, answered with a refusal or an acknowledgement (then hidden if still shown),
   * then the overlays left. True when it changed the page.
   */
  const sweep = async (page: Page, consentActed: boolean): Promise<boolean> => {
    // After a consent banner was answered, its closing transition runs before the overlays are looked at.
    const { notices, swept: sweptAlready } = consentActed ? { notices: await answerNotices(page) } : await answerNoticesThenSweep(page);
    if (consentActed || notices.clicked > 0) await finishTransitions(page, TRANSITION_MAX_MS);
    // The first pass already hid what it could not answer; a second is for what did not close when answered.
    const noticesHidden = notices.clicked > 0 ? await hideNoticesLeft(page) : 0;
    const swept = sweptAlready ?? (await sweepOverlays(page));
    const changed = notices.clicked + notices.hidden + noticesHidden + swept.removed > 0 || swept.unlocked;
    if (changed || consentActed) log.debug({ ...swept, consentActed, noticesClicked: notices.clicked, noticesHidden: notices.hidden + noticesHidden }, 'Cleaned the page');
    return changed;
  };

  /** The page may navigate or crash under us; the screenshot is still worth taking, and counts as changed. */
  const cleaning = async (run: () => Promise<boolean>): Promise<boolean> => {
    try {
      return await run();
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'Could not finish cleaning the page');
      return true;
    }
  };

  return {
    adblock: engine?.source ?? 'off',

    preparePage,

    async beforeNavigation(page, removeAds) {
      if (!prepared.has(page)) return removeAds ? setUp(page) : undefined;
      if (removeAds) return;
      // Prepared for the default, but this capture keeps its ads: nothing paused, nothing injected.
      prepared.delete(page);
      const adBlocking = sessions.get(page);
      sessions.delete(page);
      await Promise.all([page.setBypassCSP(false), adBlocking?.stop()]);
    },

    settled: async (page) => {
      await sessions.get(page)?.settled();
    },

    beforeScreenshot: (page, area) =>
      cleaning(async () => {
        // The cosmetic filters and the notice passes look at different elements, so they run side by side;
        // the notices wait for autoconsent, which answers the banners it knows first.
        const [[consentActed, swept], adsHidden] = await Promise.all([
          consent.answer(page, CONSENT_SETTLE_MAX_MS, area).then(async (acted) => [acted, await sweep(page, acted)] as const),
          sessions.get(page)?.hideAds() ?? false,
        ]);
        return consentActed || adsHidden || swept;
      }),

    sweepAgain: (page) =>
      cleaning(async () => {
        const [adsHidden, swept] = await Promise.all([sessions.get(page)?.hideAds() ?? false, sweep(page, false)]);
        return adsHidden || swept;
      }),
  };
}

/** Lets finite CSS animations and transitions (a banner fading out after a click) run to their end, then paints. */
function finishTransitions(page: Page, maxMs: number): Promise<void> {
  const finished = page.evaluate(async (max) => {
    const running = document
      .getAnimations()
      .filter((animation) => animation.playState === 'running' && Number.isFinite(animation.effect?.getComputedTiming().endTime));
    await Promise.race([
      Promise.all(running.map((animation) => animation.finished.catch(() => undefined))),
      new Promise((resolve) => setTimeout(resolve, max)),
    ]);
    await new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
  }, maxMs);
  // The page's own timers and frames pace it: bounded from here too.
  return waitAtMost(maxMs + TWO_FRAMES_MAX_MS, finished);
}
