/**
 * The in-page half of the smart wait. `installReadinessProbe` runs in every document before the
 * page's own scripts (evaluateOnNewDocument) and records what tells whether the page is still
 * becoming itself: short timers that are due to fire, DOM mutations and layout shifts.
 * `waitForPageCalm` then resolves once, on the main frame, every in-page condition holds:
 * - the load event has fired and web fonts are loaded;
 * - the images that will be in the picture are complete and decoded;
 * - no finite CSS/Web animation is still running;
 * - no short timer (<= `timerHorizonMs`, not part of an endless chain) is pending;
 * - nothing changed for `calmFrames` consecutive animation frames.
 * Network quiet is checked from outside the page (network-monitor.ts).
 * The probe also counts what reacts to scrolling (IntersectionObserver targets, scroll and wheel
 * listeners), so that a full-page capture scrolls through only the pages where scrolling can
 * change something (full-page.ts), and keeps the elements given a shadow root from script and those
 * whose resource failed to load.
 */

export interface ProbeOptions {
  /** Timers further out than this are not part of the first paint (session timeouts, analytics). */
  timerHorizonMs: number;
  /** A timer scheduled from a timer callback this many levels deep is a loop (carousel, poller). */
  maxTimerChainDepth: number;
  /** The attribute that marks the elements Viewfinder puts in a page itself (OWN_NODE_ATTRIBUTE). */
  ownNodeAttribute: string;
}

/**
 * Marks an element that Viewfinder itself puts in a page, whose changes are not the page's own: the
 * probe does not count them, and whoever adds one answers for whether it changed the picture (the
 * consent handling's hiding style, consent.ts).
 */
export const OWN_NODE_ATTRIBUTE = 'data-viewfinder-own';

export interface CalmOptions {
  calmFrames: number;
  /** Give up waiting at this point and report what was still pending. */
  timeoutMs: number;
  /** Check every image in the document (full-page capture), not just the viewport's. */
  wholeDocument: boolean;
  /** After the other conditions hold, accept continuous DOM churn (endless animation) after this long. */
  churnToleranceMs: number;
  /** False when the load event is held up only by requests that hang or long-poll. */
  requireLoadEvent: boolean;
}

export interface CalmReport {
  /** The in-page conditions held (calm, or churning past the tolerance); false when the time ran out. */
  settled: boolean;
  /** Settled with no DOM change for `calmFrames` frames. */
  calm: boolean;
  /** What was still pending when the wait ended; empty when calm. */
  pending: string[];
}

/** Runs inside the page: must not reference anything outside its own body. */
export function installReadinessProbe(options: ProbeOptions): void {
  const key = '__viewfinderReadiness';
  if ((window as unknown as Record<string, unknown>)[key]) return;
  const pending = new Map<number, number>();
  let chainDepth = 0;
  let lastChange = performance.now();
  const nativeSetTimeout = window.setTimeout.bind(window);
  const nativeClearTimeout = window.clearTimeout.bind(window);
  const nativeRequestAnimationFrame = window.requestAnimationFrame.bind(window);

  const trackedSetTimeout = function (this: unknown, handler: TimerHandler, delay?: number, ...args: unknown[]): number {
    const due = Math.max(0, Number(delay) || 0);
    const depth = chainDepth;
    const tracked = typeof handler === 'function' && due <= options.timerHorizonMs && depth < options.maxTimerChainDepth;
    let id = 0;
    const run =
      typeof handler === 'function'
        ? function (this: unknown) {
            pending.delete(id);
            chainDepth = depth + 1;
            try {
              return (handler as (...a: unknown[]) => unknown).apply(this, args);
            } finally {
              chainDepth = 0;
            }
          }
        : handler;
    id = nativeSetTimeout(run as TimerHandler, delay);
    if (tracked) pending.set(id, performance.now() + due);
    return id;
  };
  const trackedClearTimeout = (id?: number) => {
    if (id !== undefined) pending.delete(id);
    nativeClearTimeout(id);
  };
  // Keep the page's view of these functions native-looking.
  Object.defineProperty(trackedSetTimeout, 'toString', { value: () => 'function setTimeout() { [native code] }' });
  Object.defineProperty(trackedClearTimeout, 'toString', { value: () => 'function clearTimeout() { [native code] }' });
  window.setTimeout = trackedSetTimeout as typeof window.setTimeout;
  window.clearTimeout = trackedClearTimeout as typeof window.clearTimeout;

  // Whatever scrolling could set off: intersection observers and scroll listeners. The elements
  // observed against the viewport are kept, with the margin their observer adds to its bottom.
  let scrollReactions = 0;
  let scrollListeners = 0;
  const observedInViewport: { target: WeakRef<Element>; rootMargin: string }[] = [];
  const countScrollReactions = <T extends (...args: never[]) => unknown>(native: T, name: string, counts: (self: unknown, ...args: Parameters<T>) => boolean): T => {
    const wrapped = function (this: unknown, ...args: Parameters<T>) {
      if (counts(this, ...args)) scrollReactions += 1;
      return native.apply(this, args);
    };
    Object.defineProperty(wrapped, 'toString', { value: () => `function ${name}() { [native code] }` });
    return wrapped as unknown as T;
  };
  IntersectionObserver.prototype.observe = countScrollReactions(IntersectionObserver.prototype.observe, 'observe', (self, target) => {
    const observer = self as IntersectionObserver;
    // An element root's view does not move when the page scrolls; the viewport's (a null or document root) does.
    if (observer.root === null || observer.root instanceof Document) observedInViewport.push({ target: new WeakRef(target), rootMargin: observer.rootMargin });
    return true;
  });
  EventTarget.prototype.addEventListener = countScrollReactions(EventTarget.prototype.addEventListener, 'addEventListener', (_self, type) => {
    const scrolling = type === 'scroll' || type === 'wheel';
    if (scrolling) scrollListeners += 1;
    return scrolling;
  });
  /** The bottom of an observer's root in the viewport: its height, moved by the bottom of rootMargin (px, or % of the height). */
  const rootBottom = (rootMargin: string) => {
    const parts = rootMargin.trim().split(/\s+/);
    const bottom = parts[2] ?? parts[0] ?? '0px';
    return innerHeight + (bottom.endsWith('%') ? (innerHeight * Number.parseFloat(bottom)) / 100 : Number.parseFloat(bottom) || 0);
  };
  /**
   * Whether scrolling down could set something off: a scroll or wheel listener (anything may
   * follow), or an element observed against the viewport that reaches below its observer's root,
   * which scrolling would show more of. An observed element wholly in view, such as a sticky header
   * whose observer pins it, can only leave the view, and is back in it once the page is at the top.
   */
  const revealedByScrolling = () =>
    scrollListeners > 0 ||
    Boolean(window.onscroll || document.onscroll || window.onwheel) ||
    observedInViewport.some(({ target, rootMargin }) => {
      const element = target.deref();
      return element !== undefined && element.isConnected && element.getBoundingClientRect().bottom > rootBottom(rootMargin);
    });

  // Every element given a shadow root from script, closed ones too, which nothing outside can find:
  // a style inside one (:host) can make its host float over the page (remove-ads/floating-elements.ts).
  const shadowHosts: WeakRef<Element>[] = [];
  const nativeAttachShadow = Element.prototype.attachShadow;
  const trackedAttachShadow = function (this: Element, init: ShadowRootInit): ShadowRoot {
    const root = nativeAttachShadow.call(this, init);
    shadowHosts.push(new WeakRef(this));
    return root;
  };
  Object.defineProperty(trackedAttachShadow, 'toString', { value: () => 'function attachShadow() { [native code] }' });
  Element.prototype.attachShadow = trackedAttachShadow;

  // Elements whose resource failed to load: such a style sheet applies nothing, and when it is
  // another origin's, nothing else can tell (remove-ads/floating-elements.ts).
  const failedLoads = new WeakSet<EventTarget>();
  window.addEventListener('error', (event) => event.target instanceof Element && failedLoads.add(event.target), true);

  const touch = () => {
    lastChange = performance.now();
  };
  const ownNode = (node: Node) => (node instanceof Element ? node : node.parentElement)?.hasAttribute(options.ownNodeAttribute) === true;
  const ownChange = (record: MutationRecord) =>
    ownNode(record.target) || (record.type === 'childList' && [...Array.from(record.addedNodes), ...Array.from(record.removedNodes)].every(ownNode));
  new MutationObserver((records) => {
    if (!records.every(ownChange)) touch();
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  try {
    new PerformanceObserver(touch).observe({ type: 'layout-shift', buffered: true });
  } catch {
    // layout-shift is not observable in this frame; mutations still are.
  }

  Object.defineProperty(window, key, {
    enumerable: false,
    value: {
      pendingTimers: () => pending.size,
      msSinceChange: () => performance.now() - lastChange,
      scrollReactions: () => scrollReactions + (window.onscroll || document.onscroll || window.onwheel ? 1 : 0),
      revealedByScrolling,
      shadowHosts: () => shadowHosts.flatMap((ref) => ref.deref() ?? []),
      failedToLoad: (element: Element) => failedLoads.has(element),
      // For Viewfinder's own in-page scripts (the consent handler, the calm wait): their timers are
      // not the page's work, and a page that replaces these functions cannot stall them.
      nativeTimers: { setTimeout: nativeSetTimeout, clearTimeout: nativeClearTimeout, requestAnimationFrame: nativeRequestAnimationFrame },
    },
  });
}

/** Runs inside the page. */
export async function waitForPageCalm(options: CalmOptions): Promise<CalmReport> {
  const probe = (
    window as unknown as Record<
      string,
      { pendingTimers(): number; msSinceChange(): number; nativeTimers: { setTimeout: typeof setTimeout; requestAnimationFrame: typeof requestAnimationFrame } } | undefined
    >
  )['__viewfinderReadiness'];
  const started = performance.now();
  // The next frame, or the load event if it comes first: a page whose load event follows
  // DOMContentLoaded by a few milliseconds is looked at again then, not up to a frame later. The
  // look waits a task past the event, so that the page's own load listeners have run.
  const nextFrame = () =>
    new Promise<void>((resolve) => {
      const onLoad = () => (probe?.nativeTimers.setTimeout ?? setTimeout)(resolve, 0);
      (probe?.nativeTimers.requestAnimationFrame ?? requestAnimationFrame)(() => {
        window.removeEventListener('load', onLoad);
        resolve();
      });
      if (document.readyState !== 'complete') window.addEventListener('load', onLoad, { once: true });
    });
  const inViewport = (element: Element) => {
    const box = element.getBoundingClientRect();
    return box.bottom > 0 && box.right > 0 && box.top < innerHeight && box.left < innerWidth && box.width > 0 && box.height > 0;
  };
  const inPicture = (element: Element) => options.wholeDocument || inViewport(element);
  // A lazy image loads once it is in view; elsewhere it is not expected to, even in a full-page capture.
  const expectedToLoad = (image: HTMLImageElement) => (image.loading === 'lazy' ? inViewport(image) : inPicture(image));

  const stillPending = (): string[] => {
    const reasons: string[] = [];
    if (options.requireLoadEvent && document.readyState !== 'complete') reasons.push('load event');
    if (document.fonts.status === 'loading') reasons.push('web fonts');
    const images = Array.from(document.images).filter((image) => !image.complete && expectedToLoad(image));
    if (images.length > 0) reasons.push(`${images.length} image(s)`);
    const animations = document
      .getAnimations()
      .filter((animation) => animation.playState === 'running' && Number.isFinite(animation.effect?.getComputedTiming().endTime as number));
    if (animations.length > 0) reasons.push(`${animations.length} animation(s)`);
    const timers = probe?.pendingTimers() ?? 0;
    if (timers > 0) reasons.push(`${timers} timer(s)`);
    return reasons;
  };

  let calmSince: number | undefined;
  let frames = 0;
  for (;;) {
    const elapsed = performance.now() - started;
    const reasons = stillPending();
    if (reasons.length === 0) {
      calmSince ??= performance.now();
      // Calm means no change for `calmFrames` frames' worth of time; a page that settled a while
      // ago passes at once, without waiting for frames it does not need.
      frames = Math.floor((probe?.msSinceChange() ?? Infinity) / 16.7);
      const churnedLongEnough = performance.now() - calmSince >= options.churnToleranceMs;
      if (frames >= options.calmFrames || churnedLongEnough) {
        const visible = Array.from(document.images).filter((image) => inPicture(image) && image.complete && image.naturalWidth > 0);
        await Promise.all(visible.map((image) => image.decode().catch(() => undefined)));
        const calm = frames >= options.calmFrames;
        return { settled: true, calm, pending: calm ? [] : ['DOM still changing'] };
      }
    } else {
      calmSince = undefined;
      frames = 0;
    }
    if (elapsed >= options.timeoutMs) return { settled: false, calm: false, pending: reasons.length ? reasons : ['DOM still changing'] };
    await nextFrame();
  }
}
