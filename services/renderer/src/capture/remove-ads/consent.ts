import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { filterCompactRules, type Config, type IndexedCMPRuleset, type InitResponseMessage } from '@duckduckgo/autoconsent';
import type { Page } from 'puppeteer-core';

/**
 * Cookie and consent banners, with DuckDuckGo's autoconsent: its rules for hundreds of consent
 * managers ship inside the npm package, and its content script (the bundle made for Playwright and
 * Puppeteer) runs in every frame from the first line of the document. It prehides the banners it
 * knows, then opts out: it clicks "reject" or "necessary only", or hides the banner where no
 * rejection exists. Nothing is fetched from the network.
 */

/** The page-to-Node binding; the content script asks it for its configuration and rules. */
const BINDING = '__viewfinderConsentInit';
/** The page-side function the cleaner awaits before the screenshot. */
const SETTLED = '__viewfinderConsentSettled';
/** A detection pass is synchronous DOM work; this is when its outcome has surely been reported. */
const ATTEMPT_MARGIN_MS = 10;
/**
 * Autoconsent starts this long after the load event. Consent libraries open their banner from a
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
  /** The bridge and autoconsent's content script, as one document-start script. */
  source: string;
  rules: IndexedCMPRuleset;
}

export function loadConsentScripts(): ConsentScripts {
  const dist = new URL('.', import.meta.resolve('@duckduckgo/autoconsent'));
  const bundle = readFileSync(fileURLToPath(new URL('autoconsent.playwright.js', dist)), 'utf8');
  const rules = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve('@duckduckgo/autoconsent/rules/compact-rules.json')), 'utf8'));
  const bridge = `(${installBridge.toString()})(${JSON.stringify(BINDING)}, ${JSON.stringify(SETTLED)}, ${ATTEMPT_MARGIN_MS}, ${START_AFTER_LOAD_MS}, setTimeout, clearTimeout)`;
  // The smart wait's readiness probe counts the page's short timers as work still to come; autoconsent's
  // retry timers are not the page's, and the cleaner waits for autoconsent itself. So the bridge and
  // the bundle (which calls the bare names) get the native timers when the probe hands them out.
  const timers = `const ${NATIVE_TIMERS_SOURCE};`;
  return { source: `(function () {\n${timers}\nif (!${bridge}) return;\n${bundle}\n})();`, rules };
}

export interface ConsentHandling {
  /**
   * Waits until every frame's autoconsent has looked at the loaded page and, when it found a banner,
   * finished opting out. Resolves true when it clicked or hid something.
   */
  settle(timeoutMs: number): Promise<boolean>;
}

export async function enableConsentHandling(page: Page, scripts: ConsentScripts): Promise<ConsentHandling> {
  await page.exposeFunction(BINDING, (request: unknown): InitResponseMessage => initResponse(scripts.rules, request));
  await page.evaluateOnNewDocument(scripts.source);
  return {
    async settle(timeoutMs) {
      type Settled = (timeoutMs: number) => Promise<boolean>;
      const outcomes = await Promise.all(
        page.frames().map((frame) =>
          frame
            .evaluate((name, timeout) => (window as unknown as Record<string, Settled | undefined>)[name]?.(timeout) ?? false, SETTLED, timeoutMs)
            .catch(() => false),
        ),
      );
      return outcomes.some(Boolean);
    },
  };
}

function initResponse(rules: IndexedCMPRuleset, request: unknown): InitResponseMessage {
  const { url, mainFrame } = (request ?? {}) as { url?: unknown; mainFrame?: unknown };
  const compact = filterCompactRules(rules, { url: typeof url === 'string' ? url : '', mainFrame: mainFrame === true });
  return { type: 'initResp', config: CONFIG, rules: { autoconsent: [], compact } };
}

/**
 * Runs in each frame before autoconsent's content script, which it feeds: it answers the script's
 * `init` through the Node binding and follows its `report` messages, so that the cleaner can ask,
 * just before the screenshot, whether autoconsent has looked at the loaded page and finished acting.
 * Returns false where autoconsent should not run (frames that are not http(s), a second injection).
 * Must be self-contained: it is serialized into the page.
 */
function installBridge(
  binding: string,
  settledName: string,
  attemptMarginMs: number,
  startAfterLoadMs: number,
  setTimer: (callback: () => void, ms: number) => number,
  clearTimer: (id: number) => void,
): boolean {
  const win = window as unknown as Record<string, unknown>;
  if (!/^https?:$/.test(location.protocol) || win.autoconsentSendMessage) return false;

  const TERMINAL = ['nothingDetected', 'optOutSucceeded', 'optOutFailed', 'optInSucceeded', 'optInFailed', 'done'];
  const state = { lifecycle: 'loading', prehideOn: false, attempts: 0, attemptDone: false, acted: false };
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((check) => check());

  const settled = () => {
    if (TERMINAL.includes(state.lifecycle)) return true;
    // A consent manager was found: done once its popup was handled, or given up on (prehide lifted).
    if (state.lifecycle === 'cmpDetected') return !state.prehideOn;
    // Still looking, after a first pass over the loaded page. A known banner that shows up later
    // is hidden the moment it appears (prehiding is a style sheet); the generic pass takes the rest.
    if (state.lifecycle === 'started') return state.attemptDone;
    return false;
  };

  win.autoconsentSendMessage = async (message: { type: string; state?: Record<string, unknown> }) => {
    switch (message.type) {
      case 'init': {
        // Fetch the rules now, hand them over (which starts detection) only once the page has loaded.
        const reply = (win[binding] as (request: unknown) => Promise<unknown>)({ url: location.href, mainFrame: window.top === window });
        await new Promise<void>((resolve) => {
          if (document.readyState === 'complete') setTimer(() => resolve(), startAfterLoadMs);
          else addEventListener('load', () => setTimer(() => resolve(), startAfterLoadMs), { once: true });
        });
        await (win.autoconsentReceiveMessage as (reply: unknown) => Promise<void>)(await reply);
        return;
      }
      case 'report': {
        const report = message.state ?? {};
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

  Object.defineProperty(win, settledName, {
    value: (timeoutMs: number) =>
      new Promise<boolean>((resolve) => {
        const finish = () => {
          waiters.delete(check);
          clearTimer(timer);
          resolve(state.acted);
        };
        const check = () => {
          if (settled()) finish();
        };
        const timer = setTimer(finish, timeoutMs);
        waiters.add(check);
        check();
      }),
  });
  return true;
}
