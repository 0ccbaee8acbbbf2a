import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { filterCompactRules, type Config, type IndexedCMPRuleset, type InitResponseMessage } from '@duckduckgo/autoconsent';
import type { Page } from 'puppeteer-core';
import type { PictureArea } from '../capture-page.ts';
import { OWN_NODE_ATTRIBUTE } from '../readiness-probe.ts';
import { NOTICE_TEXT } from './consent-words.ts';

/**
 * Cookie and consent banners, with DuckDuckGo's autoconsent: its rules for hundreds of consent
 * managers ship inside the npm package, and its content script (the bundle made for Playwright and
 * Puppeteer) runs in each frame once the page is ready. It hides the banners it knows, then opts
 * out: it clicks "reject" or "necessary only", or hides the banner where no rejection exists.
 * Nothing is fetched from the network.
 */

/** A detection pass is synchronous DOM work; this is when its outcome has surely been reported. */
const ATTEMPT_MARGIN_MS = 10;
/**
 * Autoconsent starts at least this long after the load event. Consent libraries open their banner from a
 * load or DOMContentLoaded handler with a short fade-in; a click that lands inside it is lost (Osano's
 * cookieconsent closes nothing, then finishes opening). No human clicks that fast; neither do we.
 */
const START_AFTER_LOAD_MS = 50;
/** Where the readiness probe (the smart wait's in-page half) keeps the timer functions it replaced. */
const NATIVE_TIMERS_SOURCE =
  '{ setTimeout, clearTimeout } = window.__viewfinderReadiness?.nativeTimers ?? ' +
  '{ setTimeout: window.setTimeout.bind(window), clearTimeout: window.clearTimeout.bind(window) }';

const CONFIG: Config = {
  enabled: true,
  autoAction: 'optOut',
  disabledCmps: [],
  enablePrehide: true,
  // Longer than any capture: a known banner stays hidden until it is handled or found absent.
  prehideTimeout: 60_000,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  detectRetries: 20,
  // The script runs in the page's own world, so rules that call the page's consent API run inline.
  isMainWorld: true,
  enableHeuristicDetection: true,
  // Banners no rule knows: click "reject", or an "OK"/"got it" that only acknowledges; never "accept".
  heuristicMode: 'tier1',
  enablePopupMutationObserver: false,
  visualTest: false,
  performanceLoggingEnabled: false,
  heuristicPopupSearchTimeout: 100,
  logs: { lifecycle: false, rulesteps: false, detectionsteps: false, evals: false, errors: false, messages: false, waits: false },
};

export interface ConsentScripts {
  /** Autoconsent's content script (the bundle made for Playwright and Puppeteer). */
  bundle: string;
  rules: IndexedCMPRuleset;
}

export function loadConsentScripts(): ConsentScripts {
  const dist = new URL('.', import.meta.resolve('@duckduckgo/autoconsent'));
  const bundle = readFileSync(fileURLToPath(new URL('autoconsent.playwright.js', dist)), 'utf8');
  const rules = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve('@duckduckgo/autoconsent/rules/compact-rules.json')), 'utf8'));
  return { bundle, rules };
}

export interface ConsentHandling {
  /**
   * Runs autoconsent in every frame whose text speaks of cookies, consent or privacy (in the main
   * frame, where `area` shows it), and waits until it has looked at the page and, where it found a
   * banner, finished opting out. Resolves true when it clicked or hid something.
   */
  answer(page: Page, timeoutMs: number, area?: PictureArea): Promise<boolean>;
}

/** Filtered rules are kept for this many (URL, frame kind) pairs; a pool sees the same pages again and again. */
const RULES_CACHE_SIZE = 500;

/**
 * Autoconsent runs once the page is ready, not from the first line of every document: injected at
 * document start it cost every capture its compilation in each document, a round trip to Node for
 * the rules and a detection pass competing with the page's load: most of what removeAds cost on a
 * simple page (docs/remove-ads.md, Cost). A banner only matters to the picture once the page is ready. A frame whose text never mentions cookies, consent or privacy
 * (nor holds an open shadow root, where a banner's text would hide) has no banner to answer, and
 * costs one small evaluation.
 */
export function createConsentHandling(scripts: ConsentScripts): ConsentHandling {
  const rulesFor = cachedRules(scripts.rules);
  const prelude = `const ${NATIVE_TIMERS_SOURCE};`;
  const bridge = installBridge.toString();

  return {
    async answer(page, timeoutMs, area) {
      const mainFrame = page.mainFrame();
      const outcomes = await Promise.all(
        page.frames().map(async (frame) => {
          const url = frame.url();
          if (!/^https?:/.test(url)) return false;
          try {
            if (!(await frame.evaluate(mayHoldNotice, NOTICE_TEXT, frame === mainFrame ? (area ?? null) : null))) return false;
            const init = rulesFor(url, frame === mainFrame);
            const source =
              `(function () {\n${prelude}\n` +
              `const settled = (${bridge})(${init}, ${ATTEMPT_MARGIN_MS}, ${START_AFTER_LOAD_MS}, setTimeout, clearTimeout, ${JSON.stringify(OWN_NODE_ATTRIBUTE)});\n` +
              `if (!settled) return false;\n${scripts.bundle}\nreturn settled(${Number(timeoutMs)});\n})()`;
            return (await frame.evaluate(source)) === true;
          } catch {
            // The frame went away or navigated under us; the screenshot is still worth taking.
            return false;
          }
        }),
      );
      return outcomes.some(Boolean);
    },
  };
}

/** The init answer for a frame, serialized; rules name the URLs they run on, so the key is the URL without its fragment. */
function cachedRules(rules: IndexedCMPRuleset): (url: string, mainFrame: boolean) => string {
  const cache = new Map<string, string>();
  return (url, mainFrame) => {
    const key = `${mainFrame ? 'main' : 'sub'} ${url.split('#')[0]}`;
    let response = cache.get(key);
    if (response !== undefined) {
      // Refreshed as the most recently used.
      cache.delete(key);
    } else {
      const message: InitResponseMessage = { type: 'initResp', config: CONFIG, rules: { autoconsent: [], compact: filterCompactRules(rules, { url, mainFrame }) } };
      response = JSON.stringify(message);
      if (cache.size >= RULES_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    }
    cache.set(key, response);
    return response;
  };
}

/**
 * Whether this frame could show a consent notice in the picture: text about cookies, consent or
 * privacy is shown in `area` (anywhere when null) outside the page's navigation, which a notice
 * never is (the notice pass never takes navigation for one either), or the frame has an open shadow
 * root, where a banner built as a web component keeps its text out of reach. On a long page, a
 * word far below the picture (fs.html's "tracking resources", 128,000 px down) or in its menu (a
 * link to "Asynchronous context tracking") no longer costs a run of autoconsent's rules over the
 * whole DOM. Text nodes are read one by one, so a word split by markup is missed. Runs in the page.
 */
function mayHoldNotice(noticeText: string, area: PictureArea | null): boolean {
  const body = document.body;
  if (!body) return false;
  const words = new RegExp(noticeText, 'i');
  // A full page's area is measured from the top of the document.
  const offset = area && !area.fromViewportTop ? scrollY : 0;
  const shown = (rect: DOMRect) => rect.width > 0 && rect.height > 0 && (!area || (rect.bottom + offset > 0 && rect.top + offset < area.height));
  const range = document.createRange();
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!words.test((node as Text).data) || node.parentElement?.closest('nav, [role="navigation"]')) continue;
    range.selectNodeContents(node);
    if (Array.from(range.getClientRects()).some(shown)) return true;
  }
  return Array.from(body.querySelectorAll('*')).some((element) => element.shadowRoot !== null);
}

/**
 * Runs in the frame just before autoconsent's content script, which it feeds: it answers the
 * script's `init` with the rules and follows its `report` messages. Returns the function that
 * resolves once autoconsent has looked at the page and finished acting (true when it clicked or
 * hid something), or undefined where autoconsent should not run (a second injection).
 * Must be self-contained: it is serialized into the page.
 */
function installBridge(
  init: unknown,
  attemptMarginMs: number,
  startAfterLoadMs: number,
  setTimer: (callback: () => void, ms: number) => number,
  clearTimer: (id: number) => void,
  ownNodeAttribute: string,
): ((timeoutMs: number) => Promise<boolean>) | undefined {
  const win = window as unknown as Record<string, unknown>;
  if (win.autoconsentSendMessage) return undefined;

  // While it looks, autoconsent hides every banner its rules know with a style of its own (its
  // prehide), which it finds by this id, fills, and removes when done. Made here and marked as
  // Viewfinder's, it does not count as the page changing (the readiness probe skips it): on a page
  // with none of those banners it changes nothing, and taking that for a change threw away the
  // picture taken meanwhile. Where it does hide something shown, that counts as acting instead.
  const prehide = document.createElement('style');
  prehide.id = 'autoconsent-prehide';
  prehide.setAttribute(ownNodeAttribute, '');
  (document.head ?? document.documentElement).append(prehide);
  const hidesShownElement = (rule: CSSRule) => {
    if (!(rule instanceof CSSStyleRule)) return false;
    try {
      return Array.from(document.querySelectorAll(rule.selectorText)).some((element) => element.getClientRects().length > 0);
    } catch {
      return true; // a selector CSS takes and querySelectorAll does not: it may hide something
    }
  };
  const prehideHidesShownElement = () => prehide.isConnected && prehide.sheet !== null && Array.from(prehide.sheet.cssRules).some(hidesShownElement);

  const TERMINAL = ['nothingDetected', 'optOutSucceeded', 'optOutFailed', 'optInSucceeded', 'optInFailed', 'done'];
  const state = { lifecycle: 'loading', prehideOn: false, attempts: 0, attemptDone: false, acted: false };
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((check) => check());

  const settled = () => {
    if (TERMINAL.includes(state.lifecycle)) return true;
    // A consent manager was found: done once its popup was handled, or given up on (prehide lifted).
    if (state.lifecycle === 'cmpDetected') return !state.prehideOn;
    // Still looking, after a first pass over the page. The generic pass takes what shows up later.
    if (state.lifecycle === 'started') return state.attemptDone;
    return false;
  };

  win.autoconsentSendMessage = async (message: { type: string; state?: Record<string, unknown> }) => {
    switch (message.type) {
      case 'init': {
        // Sent from autoconsent's constructor, before the script has installed its receiver.
        await Promise.resolve();
        // A banner opened from the load event may still be fading in; a click inside that is lost
        // (Osano's cookieconsent closes nothing, then finishes opening). No human clicks that fast.
        const [navigation] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
        const sinceLoad = navigation && navigation.loadEventEnd > 0 ? performance.now() - navigation.loadEventEnd : 0;
        if (sinceLoad < startAfterLoadMs) await new Promise<void>((resolve) => setTimer(() => resolve(), startAfterLoadMs - sinceLoad));
        await (win.autoconsentReceiveMessage as (reply: unknown) => Promise<void>)(init);
        return;
      }
      case 'report': {
        const report = message.state ?? {};
        // Sent before the style is removed: what it hid until now reappears.
        if (state.prehideOn && report.prehideOn === false && prehideHidesShownElement()) state.acted = true;
        const attempts = Number(report.findCmpAttempts) || 0;
        if (attempts > state.attempts) {
          state.attempts = attempts;
          setTimer(() => {
            state.attemptDone = true;
            notify();
          }, attemptMarginMs);
        }
        state.lifecycle = String(report.lifecycle);
        state.prehideOn = report.prehideOn === true;
        if (Number(report.clicks) > 0) state.acted = true;
        notify();
        return;
      }
      case 'optOutResult':
      case 'autoconsentDone':
        state.acted = true;
        notify();
        return;
    }
  };

  const settle = (timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      const finish = () => {
        waiters.delete(check);
        clearTimer(timer);
        resolve(state.acted || prehideHidesShownElement());
      };
      const check = () => {
        if (settled()) finish();
      };
      const timer = setTimer(finish, timeoutMs);
      waiters.add(check);
      check();
    });
  return settle;
}
