/**
 * The page report (issue #40): what one visit of a page says about whether the page works, collected
 * by the renderer in the same visit as its picture (ARCHITECTURE: "A page's health is measured in
 * the same visit as its picture"). One schema serves a capture's `report`, and later a monitor run
 * and the resource's status: the types, the JSON schema the OpenAPI document shows, the bounds, and
 * each Web Vital defined once with its unit and its bands.
 */

/** What a capture asks the renderer to collect besides the report's fixed parts. */
export interface ReportRequest {
  /** Run axe-core on the page once the picture is taken, within AXE_TIMEOUT_MS. */
  axe?: boolean;
  /** The page's text (`page`) and that of the first element of each selector, for text checks. */
  text?: { page?: boolean; selectors?: string[] };
}

export const MAX_TEXT_SELECTORS = 20;
export const MAX_SELECTOR_LENGTH = 1024;

/** The renderer's wire check of a ReportRequest (protocol.ts); the API builds it from its own schema. */
export const reportRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    axe: { type: 'boolean' },
    text: {
      type: 'object',
      additionalProperties: false,
      properties: {
        page: { type: 'boolean' },
        selectors: { type: 'array', maxItems: MAX_TEXT_SELECTORS, items: { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH } },
      },
    },
  },
} as const;

// Bounds: a page decides how much it logs, requests and says; the report does not.
/** Items kept per list; `total` still counts every one. */
export const MAX_CONSOLE_ITEMS = 50;
export const MAX_FAILED_REQUESTS = 100;
export const MAX_TIMELINE_ENTRIES = 500;
export const MAX_AXE_VIOLATIONS = 50;
/** Selectors kept per axe violation (the first nodes). */
export const MAX_AXE_NODES = 5;
export const MAX_MESSAGE_LENGTH = 1000;
export const MAX_URL_LENGTH = 2048;
export const MAX_PAGE_TEXT_LENGTH = 100_000;
export const MAX_SELECTOR_TEXT_LENGTH = 10_000;
/** axe-core's run on a large page can take seconds; past this it is abandoned and the report says so. */
export const AXE_TIMEOUT_MS = 10_000;

export type Rating = 'good' | 'needs-improvement' | 'poor';

export interface WebVitalDefinition {
  unit: 'ms' | 'score';
  /** Values up to `good` are good, above `poor` are poor, in between need improvement. */
  good: number;
  poor: number;
  description: string;
}

/**
 * The bands as web-vitals (v4/v5) defines them (LCPThresholds, CLSThresholds, ...); TBT is
 * Lighthouse's (200 / 600 ms). INP needs a person's input, which a capture does not make: TBT
 * (long tasks' time beyond 50 ms after FCP) is the lab stand-in Lighthouse uses for it.
 */
export const WEB_VITALS = {
  LCP: { unit: 'ms', good: 2500, poor: 4000, description: 'Largest Contentful Paint: when the largest text or image of the viewport was painted, from navigation start.' },
  CLS: { unit: 'score', good: 0.1, poor: 0.25, description: 'Cumulative Layout Shift: the largest session window of unexpected layout shifts (gaps under 1 s, windows up to 5 s).' },
  FCP: { unit: 'ms', good: 1800, poor: 3000, description: 'First Contentful Paint: when the first text or image was painted, from navigation start.' },
  TTFB: { unit: 'ms', good: 800, poor: 1800, description: 'Time to First Byte: from navigation start to the first byte of the main document (redirects included).' },
  TBT: {
    unit: 'ms',
    good: 200,
    poor: 600,
    description: 'Total Blocking Time: the sum of every long task\'s time beyond 50 ms, from FCP to the end of the visit; the stand-in for INP, which needs input.',
  },
} as const satisfies Record<string, WebVitalDefinition>;

export type WebVitalName = keyof typeof WEB_VITALS;
export const WEB_VITAL_NAMES = Object.keys(WEB_VITALS) as WebVitalName[];

export function ratingOf(name: WebVitalName, value: number): Rating {
  const { good, poor } = WEB_VITALS[name];
  return value <= good ? 'good' : value <= poor ? 'needs-improvement' : 'poor';
}

export interface VitalReading {
  /** null when the page gave nothing to measure (no contentful paint, no navigation entry). */
  value: number | null;
  unit: WebVitalDefinition['unit'];
  rating: Rating | null;
}

/** A capped list: the first items, and how many there were in all. */
export interface Counted<T> {
  total: number;
  items: T[];
}

export type ConsoleKind = 'console' | 'exception' | 'csp-report-only' | 'browser';

export interface ConsoleEntry {
  level: 'error' | 'warning';
  kind: ConsoleKind;
  message: string;
  url?: string;
  line?: number;
}

/**
 * http: the server answered 4xx/5xx; network: Chromium's net error (refused, reset, aborted...);
 * blocked: refused before leaving the browser (blockUrls, blockResources, a restricted key's
 * domains); guard: refused by the network guard (a private or loopback address).
 */
export type FailureReason = 'http' | 'network' | 'blocked' | 'guard';

export interface FailedRequest {
  url: string;
  type: string;
  reason: FailureReason;
  status?: number;
  /** Chromium's net error, e.g. net::ERR_CONNECTION_REFUSED. */
  error?: string;
}

export interface TimelineEntry {
  url: string;
  type: string;
  /** ms from the start of navigation to the request's start. */
  startMs: number;
  /** ms from its start to its end; null when it had not ended when the visit did. */
  durationMs: number | null;
  status: number | null;
  /** Bytes transferred (headers and body as on the wire); 0 from a cache. */
  bytes: number;
  failed?: boolean;
}

export interface AxeViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  /** Nodes on the page that violate the rule. */
  count: number;
  /** The first MAX_AXE_NODES nodes' selectors. */
  targets: string[];
}

export interface BoundedText {
  text: string;
  truncated: boolean;
}

export interface PageReport {
  /** The main document as it ended: its URL, status, and the hops that led there. */
  document: { url: string; status: number | null; redirects: { url: string; status: number }[] };
  console: {
    /** The page's console.error calls, its uncaught exceptions and enforced CSP refusals. */
    errors: Counted<ConsoleEntry>;
    warnings: Counted<ConsoleEntry>;
    /** Content-Security-Policy-Report-Only violations: reported, nothing was refused. */
    cspReportOnly: Counted<ConsoleEntry>;
    /** What the browser says on its own (failed loads already in failedRequests, the icon, extensions): not the page's errors. */
    browser: Counted<ConsoleEntry>;
  };
  failedRequests: Counted<FailedRequest>;
  vitals: Record<WebVitalName, VitalReading>;
  /** From navigation start to the end of the load event; null when the load event had not ended. */
  loadTimeMs: number | null;
  weight: { requests: number; bytes: number; byType: Record<string, { requests: number; bytes: number }> };
  timeline: Counted<TimelineEntry>;
  /** Only when `axe` was asked. */
  accessibility?: { violations: Counted<AxeViolation> } | { error: string };
  /** Only when text was asked. */
  text?: { page?: BoundedText; selectors?: Record<string, BoundedText | null> };
}

const counted = (items: object) => ({
  type: 'object',
  required: ['total', 'items'],
  properties: { total: { type: 'integer', minimum: 0 }, items: { type: 'array', items } },
});

const consoleEntrySchema = {
  type: 'object',
  required: ['level', 'kind', 'message'],
  properties: {
    level: { enum: ['error', 'warning'] },
    kind: { enum: ['console', 'exception', 'csp-report-only', 'browser'] },
    message: { type: 'string', maxLength: MAX_MESSAGE_LENGTH },
    url: { type: 'string', maxLength: MAX_URL_LENGTH },
    line: { type: 'integer' },
  },
};

const boundedTextSchema = { type: 'object', required: ['text', 'truncated'], properties: { text: { type: 'string' }, truncated: { type: 'boolean' } } };

const vitalSchema = (name: WebVitalName) => {
  const { unit, good, poor, description } = WEB_VITALS[name];
  return {
    type: 'object',
    required: ['value', 'unit', 'rating'],
    description: `${description} Good up to ${good}${unit === 'ms' ? ' ms' : ''}, poor above ${poor}${unit === 'ms' ? ' ms' : ''}.`,
    properties: { value: { type: ['number', 'null'] }, unit: { const: unit }, rating: { enum: ['good', 'needs-improvement', 'poor', null] } },
  };
};

/** The JSON schema of PageReport, for the OpenAPI document and the tests. */
export const pageReportSchema = {
  type: 'object',
  required: ['document', 'console', 'failedRequests', 'vitals', 'loadTimeMs', 'weight', 'timeline'],
  description: 'What the visit that took the picture measured (docs/capture-options.md, "report"). Lists keep their first items and count them all (total).',
  properties: {
    document: {
      type: 'object',
      required: ['url', 'status', 'redirects'],
      properties: {
        url: { type: 'string', maxLength: MAX_URL_LENGTH },
        status: { type: ['integer', 'null'] },
        redirects: { type: 'array', items: { type: 'object', required: ['url', 'status'], properties: { url: { type: 'string' }, status: { type: 'integer' } } } },
      },
    },
    console: {
      type: 'object',
      required: ['errors', 'warnings', 'cspReportOnly', 'browser'],
      properties: { errors: counted(consoleEntrySchema), warnings: counted(consoleEntrySchema), cspReportOnly: counted(consoleEntrySchema), browser: counted(consoleEntrySchema) },
    },
    failedRequests: counted({
      type: 'object',
      required: ['url', 'type', 'reason'],
      properties: {
        url: { type: 'string', maxLength: MAX_URL_LENGTH },
        type: { type: 'string' },
        reason: { enum: ['http', 'network', 'blocked', 'guard'] },
        status: { type: 'integer' },
        error: { type: 'string' },
      },
    }),
    vitals: {
      type: 'object',
      required: WEB_VITAL_NAMES,
      properties: Object.fromEntries(WEB_VITAL_NAMES.map((name) => [name, vitalSchema(name)])),
    },
    loadTimeMs: { type: ['number', 'null'] },
    weight: {
      type: 'object',
      required: ['requests', 'bytes', 'byType'],
      properties: {
        requests: { type: 'integer' },
        bytes: { type: 'integer' },
        byType: { type: 'object', additionalProperties: { type: 'object', required: ['requests', 'bytes'], properties: { requests: { type: 'integer' }, bytes: { type: 'integer' } } } },
      },
    },
    timeline: counted({
      type: 'object',
      required: ['url', 'type', 'startMs', 'durationMs', 'status', 'bytes'],
      properties: {
        url: { type: 'string', maxLength: MAX_URL_LENGTH },
        type: { type: 'string' },
        startMs: { type: 'number' },
        durationMs: { type: ['number', 'null'] },
        status: { type: ['integer', 'null'] },
        bytes: { type: 'integer' },
        failed: { type: 'boolean' },
      },
    }),
    accessibility: {
      oneOf: [
        {
          type: 'object',
          required: ['violations'],
          properties: {
            violations: counted({
              type: 'object',
              required: ['id', 'impact', 'help', 'count', 'targets'],
              properties: {
                id: { type: 'string' },
                impact: { enum: ['minor', 'moderate', 'serious', 'critical', null] },
                help: { type: 'string' },
                count: { type: 'integer' },
                targets: { type: 'array', maxItems: MAX_AXE_NODES, items: { type: 'string' } },
              },
            }),
          },
        },
        { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
      ],
    },
    text: {
      type: 'object',
      properties: { page: boundedTextSchema, selectors: { type: 'object', additionalProperties: { oneOf: [boundedTextSchema, { type: 'null' }] } } },
    },
  },
} as const;
