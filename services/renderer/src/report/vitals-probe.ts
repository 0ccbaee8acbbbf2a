/**
 * Web Vitals measured inside the page as the `web-vitals` library defines them, installed with
 * evaluateOnNewDocument only when a report is asked (a capture without one runs none of this):
 * PerformanceObservers from the document's start, read once the picture is taken.
 * - LCP: the last largest-contentful-paint entry's startTime (render time, else load time).
 * - CLS: the largest session window of layout shifts without recent input; a window ends after a
 *   1 s gap or once it spans 5 s.
 * - FCP: the first-contentful-paint entry's startTime.
 * - TTFB: the navigation entry's responseStart (redirects included, as web-vitals counts it).
 * - TBT: for each long task that starts at or after FCP, its time beyond 50 ms, until the reading.
 * Times are from navigation start (the page's time origin). A prerendered page's activationStart is
 * subtracted, as web-vitals does.
 */
import type { Page } from 'puppeteer-core';
import type { WebVitalName } from './page-report.ts';

export interface VitalsReading {
  values: Record<WebVitalName, number | null>;
  loadTimeMs: number | null;
}

const PROBE = '__viewfinderVitals';

/** Runs in every document from its start; only the top document measures. */
export function installVitalsProbe(probeName: string): void {
  if (window !== window.top) return;
  const state = { lcp: null as number | null, fcp: null as number | null, cls: 0, windowValue: 0, windowStart: 0, lastShift: 0, longTasks: [] as { start: number; duration: number }[] };
  const observe = (type: string, onEntry: (entry: PerformanceEntry) => void) => {
    try {
      new PerformanceObserver((list) => list.getEntries().forEach(onEntry)).observe({ type, buffered: true });
    } catch {
      // An entry type this Chromium does not know: that vital stays null.
    }
  };
  const activationStart = () => ((performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming & { activationStart?: number }) ?? {}).activationStart ?? 0;
  observe('paint', (entry) => {
    if (entry.name === 'first-contentful-paint') state.fcp = Math.max(0, entry.startTime - activationStart());
  });
  observe('largest-contentful-paint', (entry) => {
    state.lcp = Math.max(0, entry.startTime - activationStart());
  });
  observe('layout-shift', (entry) => {
    const shift = entry as PerformanceEntry & { value: number; hadRecentInput: boolean };
    if (shift.hadRecentInput) return;
    const continues = state.windowValue > 0 && shift.startTime - state.lastShift < 1000 && shift.startTime - state.windowStart < 5000;
    if (continues) state.windowValue += shift.value;
    else {
      state.windowValue = shift.value;
      state.windowStart = shift.startTime;
    }
    state.lastShift = shift.startTime;
    state.cls = Math.max(state.cls, state.windowValue);
  });
  observe('longtask', (entry) => {
    if (state.longTasks.length < 10_000) state.longTasks.push({ start: entry.startTime, duration: entry.duration });
  });
  Object.defineProperty(window, probeName, {
    value: () => {
      const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
      const fcp = state.fcp;
      const tbt = fcp === null ? null : state.longTasks.filter((task) => task.start >= fcp).reduce((sum, task) => sum + Math.max(0, task.duration - 50), 0);
      return {
        values: {
          LCP: state.lcp,
          CLS: navigation ? state.cls : null,
          FCP: fcp,
          TTFB: navigation && navigation.responseStart > 0 ? Math.max(0, navigation.responseStart - activationStart()) : null,
          TBT: tbt,
        },
        loadTimeMs: navigation && navigation.loadEventEnd > 0 ? navigation.loadEventEnd : null,
      };
    },
  });
}

export async function prepareVitals(page: Page): Promise<void> {
  await page.evaluateOnNewDocument(installVitalsProbe, PROBE);
}

const NOTHING_MEASURED: VitalsReading = { values: { LCP: null, CLS: null, FCP: null, TTFB: null, TBT: null }, loadTimeMs: null };

/** The vitals as the page measured them so far; all null when the probe is not there (a PDF viewer, an error page). */
export async function readVitals(page: Page): Promise<VitalsReading> {
  const reading = await page
    .evaluate((name) => {
      const probe = (window as unknown as Record<string, (() => unknown) | undefined>)[name];
      return probe ? probe() : null;
    }, PROBE)
    .catch(() => null);
  return (reading as VitalsReading | null) ?? NOTHING_MEASURED;
}
