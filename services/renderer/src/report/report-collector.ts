/**
 * Collects a page report during the visit that takes the picture, only when the capture asks for
 * one: it hears the page's requests through the capture's NetworkMonitor (the one observer of
 * requests), their transferred bytes on the page's own DevTools sessions (puppeteer's, already
 * listening to the network: no DevTools call is added), the console and uncaught exceptions from
 * puppeteer's events, and the Web Vitals from the in-page probe (vitals-probe.ts). Once the picture
 * is taken, `finish` reads the vitals, then the text and axe when asked, and returns the report
 * with the request's own secrets redacted.
 */
import type { CDPSession, ConsoleMessage, HTTPRequest, Page, Protocol } from 'puppeteer-core';
import { GUARD_REFUSAL_HEADER, UPSTREAM_ERROR_HEADER } from '../guard/filtering-proxy.ts';
import { isIconFetch, type RequestObserver } from '../capture/network-monitor.ts';
import type { CaptureRequest } from '../renderer.ts';
import { auditAccessibility } from './axe-audit.ts';
import { boundedMessage, boundedUrl, CountedList, redact, secretsOf } from './bounded.ts';
import {
  MAX_CONSOLE_ITEMS,
  MAX_FAILED_REQUESTS,
  MAX_PAGE_TEXT_LENGTH,
  MAX_SELECTOR_TEXT_LENGTH,
  MAX_TIMELINE_ENTRIES,
  ratingOf,
  WEB_VITAL_NAMES,
  WEB_VITALS,
  type BoundedText,
  type ConsoleEntry,
  type FailedRequest,
  type PageReport,
  type ReportRequest,
  type TimelineEntry,
} from './page-report.ts';
import { prepareVitals, readVitals, type VitalsReading } from './vitals-probe.ts';

/** Messages the browser writes about a page on its own, not the page's console calls. */
const BROWSER_URL = /^(chrome-extension|devtools|chrome):\/\//;
/** Chromium's words for a Content-Security-Policy-Report-Only violation (logged at level info today, error before). */
const REPORT_ONLY = /^\[Report Only\]|\bThe policy is report-only\b/;
const FAILED_LOAD = /^Failed to load resource\b/;
const CSP_REFUSAL = /Content Security Policy/;

/** Requests whose transferred bytes are awaited at once. */
const MAX_PENDING_BYTES = 10_000;

interface Traffic {
  requests: number;
  bytes: number;
}

export class ReportCollector implements RequestObserver {
  readonly #page: Page;
  readonly #request: CaptureRequest;
  readonly #asked: ReportRequest;
  #navigationStart = performance.now();
  #document: HTTPRequest | undefined;
  readonly #errors = new CountedList<ConsoleEntry>(MAX_CONSOLE_ITEMS);
  readonly #warnings = new CountedList<ConsoleEntry>(MAX_CONSOLE_ITEMS);
  readonly #cspReportOnly = new CountedList<ConsoleEntry>(MAX_CONSOLE_ITEMS);
  readonly #browser = new CountedList<ConsoleEntry>(MAX_CONSOLE_ITEMS);
  readonly #failed = new CountedList<FailedRequest>(MAX_FAILED_REQUESTS);
  readonly #timeline = new CountedList<TimelineEntry>(MAX_TIMELINE_ENTRIES);
  /** The timeline entries of requests still open, to be ended. */
  readonly #open = new Map<HTTPRequest, TimelineEntry>();
  /** Resource types of requests whose bytes have not come yet, by DevTools request id. */
  readonly #pendingBytes = new Map<string, { type: string; entry: TimelineEntry | undefined }>();
  readonly #weight = { requests: 0, bytes: 0, byType: {} as Record<string, Traffic> };
  readonly #sessions = new Set<CDPSession>();
  /** Set once the picture is taken: what the reading itself causes (axe's own requests) is not the page's. */
  #closed = false;

  constructor(page: Page, request: CaptureRequest, asked: ReportRequest) {
    this.#page = page;
    this.#request = request;
    this.#asked = asked;
  }

  /** Before navigation: the vitals probe in every new document, and the console listeners. */
  async prepare(): Promise<void> {
    await prepareVitals(this.#page);
    this.#page.on('console', this.#onConsole);
    this.#page.on('pageerror', this.#onPageError);
  }

  markNavigationStart(at = performance.now()): void {
    this.#navigationStart = at;
  }

  stop(): void {
    this.#page.off('console', this.#onConsole);
    this.#page.off('pageerror', this.#onPageError);
    for (const session of this.#sessions) {
      session.off('Network.loadingFinished', this.#onLoadingFinished);
      session.off('Network.loadingFailed', this.#onLoadingFailed);
    }
    this.#sessions.clear();
  }

  started(request: HTTPRequest, at: number): void {
    if (this.#closed || isIconFetch(request)) return;
    this.#listenForBytes(request);
    const type = request.resourceType();
    this.#traffic(type).requests += 1;
    this.#weight.requests += 1;
    let entry: TimelineEntry | undefined;
    this.#timeline.add(() => {
      entry = { url: boundedUrl(request.url()), type, startMs: round(at - this.#navigationStart), durationMs: null, status: null, bytes: 0 };
      return entry;
    });
    if (entry) this.#open.set(request, entry);
    // A response from the memory cache never finishes loading on the wire: past the bound, its bytes are not waited for.
    if (this.#pendingBytes.size < MAX_PENDING_BYTES) this.#pendingBytes.set(devToolsId(request), { type, entry });
  }

  ended(request: HTTPRequest, at: number, failed: boolean): void {
    if (this.#closed || isIconFetch(request)) return;
    const entry = this.#open.get(request);
    this.#open.delete(request);
    const status = request.response()?.status() ?? null;
    if (entry) {
      entry.durationMs = round(at - this.#navigationStart - entry.startMs);
      entry.status = status;
      if (failed) entry.failed = true;
    }
    if (request.isNavigationRequest() && request.frame() === this.#page.mainFrame()) this.#document = request;
    const failure = failureOf(request, failed);
    if (failure) this.#failed.add(() => ({ url: boundedUrl(request.url()), type: request.resourceType(), ...failure }));
  }

  /** After the picture: the vitals first (axe's own long tasks must not count), then text and axe. */
  async finish(): Promise<PageReport> {
    this.#closed = true;
    const vitals = await readVitals(this.#page);
    const [text, accessibility] = await Promise.all([
      this.#asked.text ? readText(this.#page, this.#asked.text) : undefined,
      this.#asked.axe ? auditAccessibility(this.#page) : undefined,
    ]);
    const report: PageReport = {
      document: this.#documentReport(),
      console: { errors: this.#errors.toJSON(), warnings: this.#warnings.toJSON(), cspReportOnly: this.#cspReportOnly.toJSON(), browser: this.#browser.toJSON() },
      failedRequests: this.#failed.toJSON(),
      vitals: vitalReadings(vitals),
      loadTimeMs: vitals.loadTimeMs === null ? null : round(vitals.loadTimeMs),
      weight: { requests: this.#weight.requests, bytes: this.#weight.bytes, byType: structuredClone(this.#weight.byType) },
      timeline: this.#timeline.toJSON(),
      ...(accessibility ? { accessibility } : {}),
      ...(text ? { text } : {}),
    };
    return redact(report, secretsOf(this.#request));
  }

  #documentReport(): PageReport['document'] {
    const document = this.#document;
    if (!document) return { url: boundedUrl(this.#page.url()), status: null, redirects: [] };
    return {
      url: boundedUrl(document.url()),
      status: document.response()?.status() ?? null,
      redirects: document.redirectChain().map((hop) => ({ url: boundedUrl(hop.url()), status: hop.response()?.status() ?? 0 })),
    };
  }

  #traffic(type: string): Traffic {
    this.#weight.byType[type] ??= { requests: 0, bytes: 0 };
    return this.#weight.byType[type];
  }

  /** Bytes on the wire come with Network.loadingFinished on the session the request belongs to. */
  #listenForBytes(request: HTTPRequest): void {
    const session = request.client;
    if (this.#sessions.has(session)) return;
    this.#sessions.add(session);
    session.on('Network.loadingFinished', this.#onLoadingFinished);
    session.on('Network.loadingFailed', this.#onLoadingFailed);
  }

  readonly #onLoadingFinished = ({ requestId, encodedDataLength }: Protocol.Network.LoadingFinishedEvent) => {
    const pending = this.#pendingBytes.get(requestId);
    if (!pending) return;
    this.#pendingBytes.delete(requestId);
    const bytes = Math.max(0, Math.round(encodedDataLength));
    this.#weight.bytes += bytes;
    this.#traffic(pending.type).bytes += bytes;
    if (pending.entry) pending.entry.bytes = bytes;
  };

  readonly #onLoadingFailed = ({ requestId }: Protocol.Network.LoadingFailedEvent) => {
    this.#pendingBytes.delete(requestId);
  };

  readonly #onConsole = (message: ConsoleMessage) => {
    const type = message.type();
    const text = message.text();
    const reportOnly = REPORT_ONLY.test(text);
    if (!reportOnly && type !== 'error' && type !== 'warn' && type !== 'assert') return;
    const { url, lineNumber } = message.location();
    // The browser's own entries (network, security, interventions) come with no arguments.
    const fromBrowser = message.args().length === 0;
    const level = type === 'error' || type === 'assert' ? 'error' : 'warning';
    const list = reportOnly
      ? this.#cspReportOnly
      : (url && BROWSER_URL.test(url)) || (fromBrowser && (FAILED_LOAD.test(text) || !CSP_REFUSAL.test(text)))
        ? this.#browser
        : level === 'error'
          ? this.#errors
          : this.#warnings;
    const kind = list === this.#cspReportOnly ? 'csp-report-only' : list === this.#browser ? 'browser' : 'console';
    list.add(() => entry(level, kind, text, url, lineNumber));
  };

  readonly #onPageError = (error: unknown) => {
    this.#errors.add(() => {
      const err = error instanceof Error ? error : new Error(String(error));
      // The first frame of the stack: `at fn (url:line:column)` or `at url:line:column`; an html capture's document has no URL.
      const at = /\bat (?:[^\n]*? \()?([^\s()]*):(\d+):\d+\)?/.exec(err.stack ?? '');
      return entry('error', 'exception', err.message || String(error), at?.[1] || undefined, at ? Number(at[2]) - 1 : undefined);
    });
  };
}

/** puppeteer's request id is DevTools' (Network.requestWillBeSent's requestId); its types keep the field internal. */
function devToolsId(request: HTTPRequest): string {
  return (request as unknown as { id: string }).id;
}

function entry(level: ConsoleEntry['level'], kind: ConsoleEntry['kind'], message: string, url: string | undefined, line: number | undefined): ConsoleEntry {
  return {
    level,
    kind,
    message: boundedMessage(message),
    ...(url ? { url: boundedUrl(url) } : {}),
    // DevTools counts lines from 0; people, and the report, from 1.
    ...(line !== undefined && line >= 0 ? { line: line + 1 } : {}),
  };
}

/** Why a request failed, or undefined when it did not. */
function failureOf(request: HTTPRequest, failed: boolean): Pick<FailedRequest, 'reason' | 'status' | 'error'> | undefined {
  const response = request.response();
  // A stylesheet or script that answered 404 is also failed by Chromium (net::ERR_ABORTED): the status says why.
  if (!response || response.status() < 400) {
    if (!failed) return undefined;
    const error = request.failure()?.errorText ?? 'net::ERR_FAILED';
    // net::ERR_BLOCKED_BY_CLIENT(.Inspector): failed by the capture's own request rules (Fetch.failRequest).
    return { reason: error.startsWith('net::ERR_BLOCKED_BY_CLIENT') ? 'blocked' : 'network', error };
  }
  const headers = response.headers();
  const upstream = headers[UPSTREAM_ERROR_HEADER];
  if (upstream) return { reason: 'network', error: `net::${upstream}` };
  if (headers[GUARD_REFUSAL_HEADER]) return { reason: 'guard', status: response.status() };
  return { reason: 'http', status: response.status() };
}

function vitalReadings(reading: VitalsReading): PageReport['vitals'] {
  return Object.fromEntries(
    WEB_VITAL_NAMES.map((name) => {
      const raw = reading.values[name];
      const value = raw === null || !Number.isFinite(raw) ? null : name === 'CLS' ? Math.round(raw * 10_000) / 10_000 : round(raw);
      return [name, { value, unit: WEB_VITALS[name].unit, rating: value === null ? null : ratingOf(name, value) }];
    }),
  ) as PageReport['vitals'];
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The page's text and each selector's first element's, cut in the page so that no more crosses DevTools. */
async function readText(page: Page, asked: NonNullable<ReportRequest['text']>): Promise<PageReport['text']> {
  const read = await page
    .evaluate(
      (wantsPage: boolean, selectors: string[], pageMax: number, selectorMax: number) => {
        const bounded = (text: string, max: number) => ({ text: text.slice(0, max), truncated: text.length > max });
        const of = (selector: string) => {
          try {
            const element = document.querySelector(selector);
            return element ? bounded((element as HTMLElement).innerText ?? element.textContent ?? '', selectorMax) : null;
          } catch {
            return null;
          }
        };
        return {
          ...(wantsPage ? { page: bounded(document.body?.innerText ?? '', pageMax) } : {}),
          ...(selectors.length > 0 ? { selectors: Object.fromEntries(selectors.map((selector) => [selector, of(selector)])) } : {}),
        };
      },
      asked.page === true,
      asked.selectors ?? [],
      MAX_PAGE_TEXT_LENGTH,
      MAX_SELECTOR_TEXT_LENGTH,
    )
    .catch(() => ({}));
  return read as { page?: BoundedText; selectors?: Record<string, BoundedText | null> };
}
