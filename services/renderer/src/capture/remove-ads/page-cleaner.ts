import type { Page } from 'puppeteer-core';
import type { Logger } from '../../../../../lib/logger.ts';
import type { PageCleaner } from '../capture-page.ts';
import { enableAdBlocking, type AdBlocking } from './ad-blocking.ts';
import { COOKIE_NOTICE_LIST, loadAdblockEngine } from './adblock-engine.ts';
import { createConsentHandling, loadConsentScripts } from './consent.ts';
import { answerNotices, hideNoticesLeft } from './notice-sweep.ts';
import { sweepOverlays } from './overlay-sweep.ts';

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
 * What `removeAds: true` does, built once per process: ads and trackers blocked from EasyList,
 * EasyPrivacy and uBlock's lists, and cookie notices hidden with EasyList's cookie rules; consent
 * banners opted out of with autoconsent once the page is ready; then a generic pass over the
 * overlays left. Without Debian's lists it still does all but the ad blocking.
 */
export async function createPageCleaner(options: PageCleanerOptions, logger: Logger): Promise<RemoveAdsCleaner> {
  const log = logger.child({ component: 'remove-ads' });
  const engine = await loadAdblockEngine({ listsDir: options.filterListsDir, packagedLists: [COOKIE_NOTICE_LIST], cacheDir: options.adblockCacheDir, log });
  const blocker = engine?.blocker;
  const consent = createConsentHandling(loadConsentScripts());
  const sessions = new WeakMap<Page, AdBlocking>();
  if (engine) log.info({ source: engine.source, lists: engine.lists.length }, 'Loaded the ad-blocking engine');

  return {
    adblock: engine?.source ?? 'off',

    async beforeNavigation(page) {
      // Cosmetic styles and autoconsent's prehiding are <style> elements; a strict CSP would refuse them.
      const [, adBlocking] = await Promise.all([page.setBypassCSP(true), blocker ? enableAdBlocking(page, blocker) : undefined]);
      if (adBlocking) sessions.set(page, adBlocking);
    },

    async beforeScreenshot(page) {
      try {
        const [consentActed] = await Promise.all([
          consent.answer(page, CONSENT_SETTLE_MAX_MS),
          sessions.get(page)?.hideAds(),
        ]);
        // What no rule knew: answered with a refusal or an acknowledgement, then hidden if still shown.
        const noticesClicked = await answerNotices(page);
        if (consentActed || noticesClicked > 0) await finishTransitions(page, TRANSITION_MAX_MS);
        // The first pass already hid what it could not answer; a second is for what did not close when answered.
        const noticesHidden = noticesClicked > 0 ? await hideNoticesLeft(page) : 0;
        const swept = await sweepOverlays(page);
        if (swept.removed > 0 || swept.unlocked || noticesClicked > 0 || noticesHidden > 0) {
          log.debug({ ...swept, consentActed, noticesClicked, noticesHidden }, 'Cleaned the page');
        }
      } catch (err) {
        // The page may navigate or crash under us; the screenshot is still worth taking.
        log.debug({ err: (err as Error).message }, 'Could not finish cleaning the page');
      }
    },
  };
}

/** Lets finite CSS animations and transitions (a banner fading out after a click) run to their end, then paints. */
function finishTransitions(page: Page, maxMs: number): Promise<void> {
  return page.evaluate(async (max) => {
    const running = document
      .getAnimations()
      .filter((animation) => animation.playState === 'running' && Number.isFinite(animation.effect?.getComputedTiming().endTime));
    await Promise.race([
      Promise.all(running.map((animation) => animation.finished.catch(() => undefined))),
      new Promise((resolve) => setTimeout(resolve, max)),
    ]);
    await new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
  }, maxMs);
}
