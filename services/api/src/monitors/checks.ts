/**
 * Checks (issue #40): what a page must do to work, judged from its report by a pure function, so
 * that the same report and the same checks give the same verdict on any replica. The schema is
 * plain JSON schema (ajv, 2020-12), for a capture's `report.checks` today and for the PageMonitor
 * CRD and the management API later. Each failure names the check, the value measured and the bound.
 *
 * Patterns (`ignore`) match anywhere in a console message or a URL; `*` matches any characters.
 */
import {
  MAX_SELECTOR_LENGTH,
  MAX_TEXT_SELECTORS,
  WEB_VITAL_NAMES,
  WEB_VITALS,
  type ConsoleEntry,
  type FailedRequest,
  type PageReport,
  type ReportRequest,
  type WebVitalName,
} from '../../../renderer/src/report/page-report.ts';
import { wildcardSource } from '../../../renderer/src/guard/request-rules.ts';

export const AXE_IMPACTS = ['critical', 'serious', 'moderate', 'minor'] as const;
export type AxeImpact = (typeof AXE_IMPACTS)[number];

/** A bound on a Web Vital: a number in its unit, or the upper end of a band. */
export type VitalBound = number | 'good' | 'needs-improvement';

export interface TextCheck {
  /** The first element matching this selector; absent: the whole page. */
  selector?: string;
  /** Must appear. */
  contains?: string;
  /** Must not appear. */
  notContains?: string;
}

export interface Checks {
  /** The main document's final status must be one of these. */
  status?: number[];
  maxConsoleErrors?: number | { max: number; ignore?: string[] };
  maxFailedRequests?: number | { max?: number; ignore?: string[]; byType?: Record<string, number> };
  webVitals?: Partial<Record<WebVitalName, VitalBound>>;
  /** At most this many violating nodes per impact (and all more severe impacts count towards it). */
  maxViolations?: Partial<Record<AxeImpact, number>> & { skipRules?: string[] };
  text?: TextCheck[];
  /** From navigation start to the end of the load event, in ms. */
  maxLoadTime?: number;
}

export interface CheckFailure {
  /** The check's name, e.g. maxConsoleErrors, webVitals.LCP, maxFailedRequests.stylesheet, text[0]. */
  check: string;
  measured: number | string | null;
  bound: number | string | number[];
  message: string;
}

export interface Verdict {
  failing: boolean;
  failures: CheckFailure[];
  /** The names of the checks that were evaluated and passed. */
  passed: string[];
}

export const MAX_PATTERNS = 50;
export const MAX_TEXT_CHECKS = MAX_TEXT_SELECTORS;
const MAX_PATTERN_LENGTH = 1024;
const MAX_TEXT_LENGTH = 1024;

const count = { type: 'integer', minimum: 0, maximum: 1_000_000 } as const;
const patterns = { type: 'array', maxItems: MAX_PATTERNS, items: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH } } as const;
const vitalBound = (name: WebVitalName) => ({
  anyOf: [{ type: 'number', minimum: 0 }, { enum: ['good', 'needs-improvement'] }],
  description: `${WEB_VITALS[name].unit === 'ms' ? 'ms' : 'score'}, or a band: good (${WEB_VITALS[name].good}) or needs-improvement (${WEB_VITALS[name].poor})`,
});

export const checksSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'What the page must do to work; each failure names the check, the value measured and the bound (docs/capture-options.md, "Checks").',
  properties: {
    status: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'integer', minimum: 100, maximum: 599 }, description: 'Expected final statuses of the main document.' },
    maxConsoleErrors: {
      anyOf: [count, { type: 'object', additionalProperties: false, required: ['max'], properties: { max: count, ignore: patterns } }],
      description: 'Console errors and uncaught exceptions (CSP report-only and the browser\'s own messages never count); ignore: patterns of messages not counted.',
    },
    maxFailedRequests: {
      anyOf: [
        count,
        {
          type: 'object',
          additionalProperties: false,
          properties: { max: count, ignore: patterns, byType: { type: 'object', maxProperties: 30, propertyNames: { pattern: '^[a-z]{1,32}$' }, additionalProperties: count } },
        },
      ],
      description: 'Requests that failed (4xx/5xx, network errors, refused); ignore: URL patterns; byType: a bound per resource type (script, stylesheet, fetch, ...).',
    },
    webVitals: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(WEB_VITAL_NAMES.map((name) => [name, vitalBound(name)])),
    },
    maxViolations: {
      type: 'object',
      additionalProperties: false,
      properties: { ...Object.fromEntries(AXE_IMPACTS.map((impact) => [impact, count])), skipRules: patterns },
      description: 'axe-core violations (nodes) at or above each impact; runs axe on the page. skipRules: rule ids not counted.',
    },
    text: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_TEXT_CHECKS,
      items: {
        type: 'object',
        additionalProperties: false,
        anyOf: [
          { required: ['contains'], properties: { contains: true } },
          { required: ['notContains'], properties: { notContains: true } },
        ],
        properties: {
          selector: { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH },
          contains: { type: 'string', minLength: 1, maxLength: MAX_TEXT_LENGTH },
          notContains: { type: 'string', minLength: 1, maxLength: MAX_TEXT_LENGTH },
        },
      },
    },
    maxLoadTime: { type: 'number', minimum: 0, description: 'ms from navigation start to the end of the load event.' },
  },
} as const;

/** The JSON schema of a Verdict, for the OpenAPI document. */
export const verdictSchema = {
  type: 'object',
  required: ['failing', 'failures', 'passed'],
  description: 'The checks judged against this report: failing when any check failed.',
  properties: {
    failing: { type: 'boolean' },
    failures: {
      type: 'array',
      items: {
        type: 'object',
        required: ['check', 'measured', 'bound', 'message'],
        properties: {
          check: { type: 'string', description: 'e.g. status, maxConsoleErrors, maxFailedRequests.stylesheet, webVitals.LCP, maxViolations.serious, text[0].contains, maxLoadTime' },
          measured: { type: ['number', 'string', 'null'] },
          bound: { anyOf: [{ type: 'number' }, { type: 'string' }, { type: 'array', items: { type: 'integer' } }] },
          message: { type: 'string' },
        },
      },
    },
    passed: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** What the report must hold for these checks: axe for maxViolations, text for text checks. */
export function reportRequestFor(checks: Checks | undefined, axe = false): ReportRequest {
  const texts = checks?.text ?? [];
  const selectors = [...new Set(texts.flatMap((check) => (check.selector === undefined ? [] : [check.selector])))];
  const wantsPage = texts.some((check) => check.selector === undefined);
  return {
    ...(axe || checks?.maxViolations ? { axe: true } : {}),
    ...(texts.length > 0 ? { text: { ...(wantsPage ? { page: true } : {}), ...(selectors.length > 0 ? { selectors } : {}) } } : {}),
  };
}

/** Matches anywhere in the text; `*` is any characters, as in blockUrls. */
function patternRegExp(pattern: string): RegExp {
  return new RegExp(wildcardSource(pattern), 's');
}

/** How many of a counted list count: its total less the kept items that are ignored (items beyond the cap always count). */
function countNotIgnored<T>(list: { total: number; items: T[] }, ignore: string[] | undefined, textOf: (item: T) => string): number {
  const ignored = (ignore ?? []).map(patternRegExp);
  const dropped = list.items.filter((item) => ignored.some((pattern) => pattern.test(textOf(item)))).length;
  return list.total - dropped;
}

function vitalLimit(name: WebVitalName, bound: VitalBound): number {
  if (bound === 'good') return WEB_VITALS[name].good;
  if (bound === 'needs-improvement') return WEB_VITALS[name].poor;
  return bound;
}

export function evaluateChecks(report: PageReport, checks: Checks): Verdict {
  const failures: CheckFailure[] = [];
  const passed: string[] = [];
  const judge = (check: string, ok: boolean, measured: CheckFailure['measured'], bound: CheckFailure['bound'], message: string) => {
    if (ok) passed.push(check);
    else failures.push({ check, measured, bound, message });
  };

  if (checks.status) {
    const status = report.document.status;
    judge('status', status !== null && checks.status.includes(status), status, checks.status, `the page answered ${status ?? 'nothing'}, expected ${checks.status.join(' or ')}`);
  }

  if (checks.maxConsoleErrors !== undefined) {
    const { max, ignore } = typeof checks.maxConsoleErrors === 'number' ? { max: checks.maxConsoleErrors, ignore: undefined } : checks.maxConsoleErrors;
    const errors = countNotIgnored(report.console.errors, ignore, (entry: ConsoleEntry) => entry.message);
    judge('maxConsoleErrors', errors <= max, errors, max, `${errors} console error${errors === 1 ? '' : 's'}, at most ${max} allowed`);
  }

  if (checks.maxFailedRequests !== undefined) {
    const { max, ignore, byType } = typeof checks.maxFailedRequests === 'number' ? { max: checks.maxFailedRequests, ignore: undefined, byType: undefined } : checks.maxFailedRequests;
    const url = (request: FailedRequest) => request.url;
    if (max !== undefined) {
      const failed = countNotIgnored(report.failedRequests, ignore, url);
      judge('maxFailedRequests', failed <= max, failed, max, `${failed} failed request${failed === 1 ? '' : 's'}, at most ${max} allowed`);
    }
    const ignored = (ignore ?? []).map(patternRegExp);
    for (const [type, typeMax] of Object.entries(byType ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      // A type's count is what the kept items show: beyond the cap, types are not known.
      const failed = report.failedRequests.items.filter((request) => request.type === type && !ignored.some((pattern) => pattern.test(request.url))).length;
      judge(`maxFailedRequests.${type}`, failed <= typeMax, failed, typeMax, `${failed} failed ${type} request${failed === 1 ? '' : 's'}, at most ${typeMax} allowed`);
    }
  }

  for (const name of WEB_VITAL_NAMES) {
    const bound = checks.webVitals?.[name];
    if (bound === undefined) continue;
    const limit = vitalLimit(name, bound);
    const { value, unit } = report.vitals[name];
    const shown = (n: number) => (unit === 'ms' ? `${n} ms` : String(n));
    // Nothing measured (no contentful paint) passes: a check bounds a value, it does not demand one.
    judge(`webVitals.${name}`, value === null || value <= limit, value, limit, `${name} was ${value === null ? 'not measured' : shown(value)}, at most ${shown(limit)} allowed`);
  }

  if (checks.maxViolations) {
    const { skipRules, ...bounds } = checks.maxViolations;
    const accessibility = report.accessibility;
    for (const impact of AXE_IMPACTS) {
      const max = bounds[impact];
      if (max === undefined) continue;
      const check = `maxViolations.${impact}`;
      if (!accessibility || 'error' in accessibility) {
        judge(check, false, null, max, `the accessibility audit did not run: ${accessibility && 'error' in accessibility ? accessibility.error : 'not in the report'}`);
        continue;
      }
      const skipped = (skipRules ?? []).map(patternRegExp);
      const atOrAbove = new Set(AXE_IMPACTS.slice(0, AXE_IMPACTS.indexOf(impact) + 1));
      const nodes = accessibility.violations.items
        .filter((violation) => violation.impact !== null && atOrAbove.has(violation.impact) && !skipped.some((pattern) => pattern.test(violation.id)))
        .reduce((sum, violation) => sum + violation.count, 0);
      judge(check, nodes <= max, nodes, max, `${nodes} element${nodes === 1 ? '' : 's'} violate accessibility rules of impact ${impact} or worse, at most ${max} allowed`);
    }
  }

  for (const [index, check] of (checks.text ?? []).entries()) {
    const name = `text[${index}]`;
    const where = check.selector === undefined ? 'the page' : check.selector;
    const read = check.selector === undefined ? report.text?.page : report.text?.selectors?.[check.selector];
    const text = read?.text ?? null;
    if (check.contains !== undefined) {
      judge(`${name}.contains`, text !== null && text.includes(check.contains), text === null ? null : 'absent', check.contains, text === null ? `${where}: no such element` : `${where} does not contain ${JSON.stringify(check.contains)}`);
    }
    if (check.notContains !== undefined) {
      judge(`${name}.notContains`, text === null || !text.includes(check.notContains), text === null ? null : 'present', check.notContains, `${where} contains ${JSON.stringify(check.notContains)}`);
    }
  }

  if (checks.maxLoadTime !== undefined) {
    const load = report.loadTimeMs;
    judge('maxLoadTime', load !== null && load <= checks.maxLoadTime, load, checks.maxLoadTime, `the page ${load === null ? 'had not finished loading' : `loaded in ${load} ms`}, at most ${checks.maxLoadTime} ms allowed`);
  }

  return { failing: failures.length > 0, failures, passed };
}
