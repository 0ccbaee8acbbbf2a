/**
 * Runs a capture's journey (journey-steps.ts) on the loaded page, step by step, each within its own
 * time bound, and reports what ran. Every navigation a step causes is held to the capture's guard:
 * a goto is checked before it leaves (so a refused address is never asked), and anything else that
 * navigates (a form post, a link, a redirect) goes through the filtering proxy and the domain scope
 * like the first page did; after each step the capture's navigation watch says whether the page was
 * refused, and the step fails with that reason.
 *
 * Values typed into the page (fill) are secrets: the report and every error name the step, its
 * selector and what went wrong, never a value, and any message from puppeteer is scrubbed of them.
 */
import { TimeoutError, type HTTPRequest, type KeyInput, type Page } from 'puppeteer-core';
import { Forbidden, HttpError, JourneyFailed } from '../../../../lib/errors.ts';
import { DEFAULT_STEP_TIMEOUT_MS, type FailureReason, type JourneyStep } from './journey-steps.ts';
import { sleep } from './sleep.ts';
import { redact, secretsOf } from '../report/bounded.ts';
import { waitAtMost } from './wait-at-most.ts';

/** What the journey needs of the capture's guard (pool.ts builds it from the network guard, the domain scope and the navigation watch). */
export interface JourneyGuard {
  /** Throws (400, 403) when the main frame may not go to `url`: the network guard, a restricted key's domains. */
  checkUrl(url: string): Promise<void>;
  /** Why the main frame did not show a page it went to (refused, unreachable), if it did not. */
  failure(): Promise<HttpError | undefined>;
}

export type { FailureReason };

/** One step as the report shows it: what it was (never a value typed), whether it ran, how long it took. */
export interface StepReport {
  action: JourneyStep['action'];
  selector?: string;
  url?: string;
  key?: string;
  name?: string;
  state?: string;
  status: 'ok' | 'failed' | 'skipped';
  /** Only for steps that ran. */
  durationMs?: number;
  /** Only for the step that failed. */
  reason?: FailureReason;
}

export interface JourneyCapture {
  name: string;
  /** A viewport PNG. */
  image: Buffer;
}

export interface JourneyOutcome {
  steps: StepReport[];
  captures: JourneyCapture[];
}

/** A step's failure, before it is turned into the capture's 422. */
class StepFailure extends Error {
  readonly reason: FailureReason;

  constructor(reason: FailureReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** How long after an action a navigation it caused has to start to be waited for: a click's or Enter's form post starts within a task or two. */
const NAVIGATION_GRACE_MS = 150;
/** The picture of a failed step is best effort: a page that cannot be pictured in this time is reported without one. */
const FAILURE_PICTURE_MS = 3000;

export async function runJourney(page: Page, steps: readonly JourneyStep[], guard: JourneyGuard, signal?: AbortSignal): Promise<JourneyOutcome> {
  // The same rule as the page report's: what the request sent, fill values included, never comes back.
  const secrets = secretsOf({ url: '', steps: [...steps] });
  const scrub = (text: string) => redact(text, secrets);
  const report: StepReport[] = steps.map((step) => ({ ...describeStep(step), status: 'skipped' }));
  const captures: JourneyCapture[] = [];
  for (const [i, step] of steps.entries()) {
    const started = performance.now();
    const deadline = started + (step.timeout ?? DEFAULT_STEP_TIMEOUT_MS);
    const entry = report[i]!;
    try {
      const picture = await withinTimeout(runStep(page, step, deadline, guard, signal), deadline, started);
      if (picture) captures.push({ name: (step as { name: string }).name, image: picture });
      // A navigation the step caused may have been refused or failed meanwhile, even if the step itself went through.
      const refused = await guard.failure();
      if (refused) throw navigationFailure(refused);
      entry.status = 'ok';
      entry.durationMs = Math.round(performance.now() - started);
    } catch (err) {
      // The capture's deadline or its client: not the step's fault, and the page is closing.
      if (signal?.aborted) throw signal.reason;
      const failure = await asStepFailure(err, step, deadline, started, guard);
      Object.assign(entry, { status: 'failed', durationMs: Math.round(performance.now() - started), reason: failure.reason });
      const message = scrub(`Step ${i + 1} of ${steps.length} (${stepLabel(step)}) failed: ${failure.message}`);
      const image = await failurePicture(page);
      throw new JourneyFailed(message, journeyJson({ steps: report, captures }, i), image ? `data:image/png;base64,${image.toString('base64')}` : undefined);
    }
  }
  return { steps: report, captures };
}

/** The page as it is when a step failed, or undefined when it cannot be pictured within FAILURE_PICTURE_MS. */
async function failurePicture(page: Page): Promise<Buffer | undefined> {
  let picture: Buffer | undefined;
  await waitAtMost(FAILURE_PICTURE_MS, page.screenshot({ type: 'png' }).then((bytes) => void (picture = Buffer.from(bytes))));
  return picture;
}

/** The journey as JSON (a report, pictures as data URIs), for an answer or an error; `failedStep` counts from 0. */
export function journeyJson(outcome: JourneyOutcome, failedStep?: number): Record<string, unknown> {
  return {
    steps: outcome.steps,
    ...(failedStep !== undefined ? { failedStep } : {}),
    captures: outcome.captures.map(({ name, image }) => ({ name, image: `data:image/png;base64,${image.toString('base64')}` })),
  };
}

function describeStep(step: JourneyStep): Omit<StepReport, 'status'> {
  const shown: Omit<StepReport, 'status'> = { action: step.action };
  if ('selector' in step && step.selector !== undefined) shown.selector = step.selector;
  if ((step.action === 'goto' || step.action === 'waitFor') && step.url !== undefined) shown.url = step.url;
  if (step.action === 'press') shown.key = step.key;
  if (step.action === 'capture') shown.name = step.name;
  if (step.action === 'waitFor' && step.selector !== undefined) shown.state = step.state ?? 'visible';
  return shown;
}

/** `fill "#password"`, `goto https://...`: how an error names a step, without its value. */
function stepLabel(step: JourneyStep): string {
  const { action, selector, url, key, name } = describeStep(step);
  const what = selector ?? url ?? name;
  return [action, key, what !== undefined ? JSON.stringify(what) : undefined].filter(Boolean).join(' ');
}

function navigationFailure(err: HttpError): StepFailure {
  return err instanceof Forbidden
    ? new StepFailure('navigation-refused', `the navigation was refused: ${err.message}`)
    : new StepFailure('navigation-failed', `the navigation failed: ${err.message}`);
}

/** Why a step failed, in words a client can act on; a guard's refusal wins over what it caused (a timeout, an aborted load). */
async function asStepFailure(err: unknown, step: JourneyStep, deadline: number, started: number, guard: JourneyGuard): Promise<StepFailure> {
  const refused = await guard.failure();
  if (refused) return navigationFailure(refused);
  if (err instanceof StepFailure) return err;
  if (err instanceof Forbidden) return new StepFailure('navigation-refused', `the navigation was refused: ${err.message}`);
  if (err instanceof HttpError) return new StepFailure(err.status >= 500 ? 'navigation-failed' : 'action-failed', err.message);
  const ms = Math.round(deadline - started);
  if (err instanceof TimeoutError) return new StepFailure('timeout', `it did not finish within its timeout of ${ms} ms`);
  const message = String((err as Error)?.message ?? err).split('\n')[0]!;
  const netError = /net::ERR_[A-Z_]+/.exec(message)?.[0];
  if (netError) return new StepFailure('navigation-failed', `the navigation failed: ${netError}`);
  if (step.action === 'press' && /Unknown key/i.test(message)) return new StepFailure('action-failed', `${JSON.stringify(step.key)} is not a key name (e.g. Enter, Tab, ArrowDown, a)`);
  return new StepFailure('action-failed', message.slice(0, 300));
}

/**
 * `work`, or a timeout failure once the step's time is up: each step's waits are bounded already,
 * and this bounds what is not (a click, a picture on a page that stopped answering), so that no step
 * outlives its timeout by more than a moment.
 */
async function withinTimeout<T>(work: Promise<T>, deadline: number, started: number): Promise<T> {
  // The waits inside the step report their own failure first; this is the backstop.
  const backstopMs = Math.max(0, deadline - performance.now()) + STEP_BACKSTOP_GRACE_MS;
  const timer = new AbortController();
  const expired = sleep(backstopMs, timer.signal).then(
    () => Promise.reject(new StepFailure('timeout', `it did not finish within its timeout of ${Math.round(deadline - started)} ms`)),
    () => new Promise<never>(() => undefined),
  );
  work.catch(() => undefined);
  try {
    return await Promise.race([work, expired]);
  } finally {
    timer.abort();
  }
}

/** How long past its timeout a step's own waits have to fail before the backstop does. */
const STEP_BACKSTOP_GRACE_MS = 1000;

const remaining = (deadline: number) => Math.max(1, Math.round(deadline - performance.now()));

/** Runs one step; a capture step answers its picture. */
async function runStep(page: Page, step: JourneyStep, deadline: number, guard: JourneyGuard, signal?: AbortSignal): Promise<Buffer | undefined> {
  switch (step.action) {
    case 'goto':
      // Checked here, before the browser asks: a refused address never sees the request.
      await guard.checkUrl(step.url);
      await page.goto(step.url, { waitUntil: 'domcontentloaded', timeout: remaining(deadline), ...(signal ? { signal } : {}) });
      return undefined;
    case 'fill':
      await waitForElement(page, step.selector, 'visible', deadline, signal);
      if (!(await page.evaluate(fillInPage, step.selector, step.value ?? ''))) throw new StepFailure('action-failed', 'the element is not a text field (input, textarea or contenteditable)');
      return undefined;
    case 'click':
      await waitForElement(page, step.selector, 'visible', deadline, signal);
      await withNavigation(page, deadline, signal, () => page.click(step.selector));
      return undefined;
    case 'press':
      if (step.selector !== undefined) {
        await waitForElement(page, step.selector, 'visible', deadline, signal);
        await page.focus(step.selector);
      }
      await withNavigation(page, deadline, signal, () => page.keyboard.press(step.key as KeyInput));
      return undefined;
    case 'select': {
      await waitForElement(page, step.selector, 'visible', deadline, signal);
      const wanted = step.values ?? [step.value ?? ''];
      const selected = await withNavigation(page, deadline, signal, () => page.select(step.selector, ...wanted));
      if (!wanted.every((value) => selected.includes(value))) throw new StepFailure('action-failed', 'the element is not a <select> holding an option of every value given');
      return undefined;
    }
    case 'check':
    case 'uncheck': {
      await waitForElement(page, step.selector, 'visible', deadline, signal);
      const want = step.action === 'check';
      const state = await page.$eval(step.selector, (element) => (element instanceof HTMLInputElement && (element.type === 'checkbox' || element.type === 'radio') ? element.checked : null));
      if (state === null) throw new StepFailure('action-failed', 'the element is not a checkbox or a radio button');
      // A real click, so that the page's own handlers run, as a visitor's would.
      if (state !== want) await withNavigation(page, deadline, signal, () => page.click(step.selector));
      const after = await page.$eval(step.selector, (element) => (element as HTMLInputElement).checked).catch(() => want);
      if (after !== want) throw new StepFailure('action-failed', `the element stayed ${after ? 'checked' : 'unchecked'} after a click`);
      return undefined;
    }
    case 'hover':
      await waitForElement(page, step.selector, 'visible', deadline, signal);
      await page.hover(step.selector);
      return undefined;
    case 'scroll':
      if (step.selector !== undefined) {
        await waitForElement(page, step.selector, 'attached', deadline, signal);
        await page.$eval(step.selector, (element) => element.scrollIntoView({ block: 'center' }));
      } else {
        await page.evaluate((x: number, y: number) => window.scrollBy(x, y), step.x ?? 0, step.y ?? 0);
      }
      return undefined;
    case 'waitFor':
      if (step.selector !== undefined) await waitForElement(page, step.selector, step.state ?? 'visible', deadline, signal);
      else if (step.url !== undefined) await waitForUrl(page, step.url, deadline, signal);
      else await page.waitForNetworkIdle({ idleTime: 500, timeout: remaining(deadline), ...(signal ? { signal } : {}) });
      return undefined;
    case 'capture':
      return Buffer.from(await page.screenshot({ type: 'png' }));
  }
}

/** Runs in the page: sets a field's value as typing would leave it, and tells the page's own code (input, change). */
function fillInPage(css: string, value: string): boolean {
  const element = document.querySelector(css);
  if (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement) {
    element.focus();
    // Through the prototype's setter, so that frameworks that watch the property (React) see the change.
    Object.getOwnPropertyDescriptor(Object.getPrototypeOf(element), 'value')?.set?.call(element, value);
  } else if (element instanceof HTMLElement && element.isContentEditable) {
    element.focus();
    element.textContent = value;
  } else {
    return false;
  }
  element.dispatchEvent(new Event('input', { bubbles: true }));
  element.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
}

/**
 * Waits until the element is visible (a box with a size, not visibility: hidden), hidden (absent or
 * not visible), or only in the document; the step fails with the selector named when it never is.
 */
async function waitForElement(page: Page, selector: string, state: 'visible' | 'hidden' | 'attached', deadline: number, signal?: AbortSignal): Promise<void> {
  const timeout = remaining(deadline);
  try {
    await page.waitForFunction(
      (css: string, wanted: string) => {
        const element = document.querySelector(css);
        if (wanted === 'attached') return element !== null;
        const box = element?.getBoundingClientRect();
        const visible = !!element && !!box && box.width > 0 && box.height > 0 && getComputedStyle(element).visibility !== 'hidden';
        return wanted === 'visible' ? visible : !visible;
      },
      { timeout, polling: 100, ...(signal ? { signal } : {}) },
      selector,
      state,
    );
  } catch (err) {
    if (!(err instanceof TimeoutError)) throw err;
    if (state === 'hidden') throw new StepFailure('timeout', `the element matching ${JSON.stringify(selector)} was still visible after ${timeout} ms`);
    throw new StepFailure('selector-not-visible', `no element matching ${JSON.stringify(selector)} became ${state === 'visible' ? 'visible' : 'part of the page'} within ${timeout} ms`);
  }
}

/** `*` matches any text, everything else itself, against the whole URL. */
export function urlPatternMatcher(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

async function waitForUrl(page: Page, pattern: string, deadline: number, signal?: AbortSignal): Promise<void> {
  const matcher = urlPatternMatcher(pattern);
  const timeout = remaining(deadline);
  while (!matcher.test(page.url())) {
    if (performance.now() >= deadline) throw new StepFailure('timeout', `the page's URL did not match ${JSON.stringify(pattern)} within ${timeout} ms (it is ${JSON.stringify(page.url())})`);
    await sleep(100, signal);
  }
}

/**
 * Does `act`, then, if it started a navigation of the main frame (a link, a form post), waits until
 * the new page has loaded (DOMContentLoaded) within the step's time. The watch starts before the
 * action, so that a navigation that starts at once is not missed.
 */
async function withNavigation<T>(page: Page, deadline: number, signal: AbortSignal | undefined, act: () => Promise<T>): Promise<T> {
  let navigating = false;
  const onRequest = (request: HTTPRequest) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigating = true;
  };
  const stopWaiting = new AbortController();
  const stop = signal ? AbortSignal.any([signal, stopWaiting.signal]) : stopWaiting.signal;
  const navigated = page.waitForNavigation({ waitUntil: 'domcontentloaded', timeout: remaining(deadline), signal: stop });
  navigated.catch(() => undefined);
  page.on('request', onRequest);
  try {
    const result = await act();
    await sleep(NAVIGATION_GRACE_MS, signal);
    if (navigating) await navigated;
    return result;
  } finally {
    page.off('request', onRequest);
    stopWaiting.abort();
  }
}
