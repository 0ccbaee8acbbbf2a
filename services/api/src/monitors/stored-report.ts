/**
 * A run keeps each page's report in the store, within the run's record: a MongoDB document holds at
 * most 16 MiB, and a report at its bounds (500 timeline entries and 100 failed requests with URLs of
 * 2048 characters, 200 console messages, 100 000 characters of text) can pass 2 MiB, so 20 such
 * pages would not fit. Beyond STORED_REPORT_BYTES, the lists keep fewer of their first items (their
 * `total` still counts them all, as the report's own caps do) and texts are cut (marked truncated).
 * The verdict is judged on the whole report first: what is trimmed is evidence, never the outcome.
 */
import type { BoundedText, Counted, PageReport } from '../../../renderer/src/report/page-report.ts';

/** 20 pages of this fit a MongoDB document with room to spare. */
export const STORED_REPORT_BYTES = 512 * 1024;

const size = (report: PageReport) => Buffer.byteLength(JSON.stringify(report));
const halved = <T>(list: Counted<T>): Counted<T> => ({ total: list.total, items: list.items.slice(0, Math.floor(list.items.length / 2)) });
const cut = (text: BoundedText | null | undefined, length: number): BoundedText | null | undefined =>
  text && text.text.length > length ? { text: text.text.slice(0, length), truncated: true } : text;

export function reportForStorage(report: PageReport, maxBytes = STORED_REPORT_BYTES): PageReport {
  let stored = report;
  // The bulkiest parts first, each halved until the report fits: the timeline, the texts, the console, the failures.
  const steps: Array<(current: PageReport) => PageReport> = [
    (current) => ({ ...current, timeline: halved(current.timeline) }),
    (current) => (current.text ? { ...current, text: shrinkText(current.text) } : current),
    (current) => ({
      ...current,
      console: {
        errors: halved(current.console.errors),
        warnings: halved(current.console.warnings),
        cspReportOnly: halved(current.console.cspReportOnly),
        browser: halved(current.console.browser),
      },
    }),
    (current) => ({ ...current, failedRequests: halved(current.failedRequests) }),
  ];
  for (let round = 0; round < 12 && size(stored) > maxBytes; round += 1) {
    for (const step of steps) {
      if (size(stored) <= maxBytes) break;
      stored = step(stored);
    }
  }
  return stored;
}

function shrinkText(text: NonNullable<PageReport['text']>): NonNullable<PageReport['text']> {
  const page = cut(text.page, Math.floor((text.page?.text.length ?? 0) / 2));
  const selectors = text.selectors
    ? Object.fromEntries(Object.entries(text.selectors).map(([selector, value]) => [selector, cut(value, Math.floor((value?.text.length ?? 0) / 2)) ?? null]))
    : undefined;
  return { ...(page ? { page } : {}), ...(selectors ? { selectors } : {}) };
}
