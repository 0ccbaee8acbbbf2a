import { expect } from 'chai';
import { checksSchema, evaluateChecks, reportRequestFor, type Checks } from '../../../../services/api/src/monitors/checks.ts';
import { compileValidator } from '../../../../services/api/src/validation.ts';
import type { ConsoleEntry, FailedRequest, PageReport } from '../../../../services/renderer/src/report/page-report.ts';

const none = { total: 0, items: [] };
const vital = (value: number | null, unit: 'ms' | 'score' = 'ms') => ({ value, unit, rating: null });

/** A report of a page that works, with `changes` over it. */
function reportWith(changes: Partial<PageReport> = {}): PageReport {
  return {
    document: { url: 'https://shop.example/', status: 200, redirects: [] },
    console: { errors: none, warnings: none, cspReportOnly: none, browser: none },
    failedRequests: none,
    vitals: { LCP: vital(1200), CLS: vital(0.02, 'score'), FCP: vital(800), TTFB: vital(120), TBT: vital(0) },
    loadTimeMs: 1500,
    weight: { requests: 3, bytes: 3000, byType: {} },
    timeline: none,
    accessibility: { violations: none },
    text: { page: { text: 'Welcome to the shop. Add to cart', truncated: false }, selectors: { '#price': { text: '12.00 EUR', truncated: false } } },
    ...changes,
  };
}

const errors = (...messages: string[]): PageReport['console'] => ({
  ...reportWith().console,
  errors: { total: messages.length, items: messages.map((message): ConsoleEntry => ({ level: 'error', kind: 'console', message })) },
});
const failed = (...requests: Array<Pick<FailedRequest, 'url' | 'type'>>): PageReport['failedRequests'] => ({
  total: requests.length,
  items: requests.map((request) => ({ ...request, reason: 'http', status: 404 })),
});

const failedChecks = (report: PageReport, checks: Checks) => evaluateChecks(report, checks).failures.map((failure) => failure.check);

describe('checks: evaluateChecks judges a page report (a pure function)', () => {
  it('a working page passes every check, and the verdict lists them as passed', () => {
    const checks: Checks = {
      status: [200],
      maxConsoleErrors: 0,
      maxFailedRequests: { max: 0, byType: { script: 0 } },
      webVitals: { LCP: 'good', CLS: 0.1, FCP: 1800, TTFB: 800, TBT: 'needs-improvement' },
      maxViolations: { serious: 0 },
      text: [{ contains: 'Add to cart', notContains: 'Error' }, { selector: '#price', contains: 'EUR' }],
      maxLoadTime: 3000,
    };
    const verdict = evaluateChecks(reportWith(), checks);
    expect(verdict.failing).to.equal(false);
    expect(verdict.failures).to.deep.equal([]);
    expect(verdict.passed).to.have.length(14);
  });

  it('status: names the status measured and the expected ones', () => {
    const report = reportWith({ document: { url: 'https://shop.example/', status: 503, redirects: [] } });
    expect(evaluateChecks(report, { status: [200, 204] }).failures).to.deep.equal([
      { check: 'status', measured: 503, bound: [200, 204], message: 'the page answered 503, expected 200 or 204' },
    ]);
  });

  it('maxConsoleErrors: counts errors, less those matching an ignore pattern (* is any text)', () => {
    const report = reportWith({ console: errors('analytics blocked', 'TypeError: price is undefined', 'Widget 42 failed') });
    expect(evaluateChecks(report, { maxConsoleErrors: 0 }).failures[0]).to.include({ check: 'maxConsoleErrors', measured: 3, bound: 0 });
    expect(evaluateChecks(report, { maxConsoleErrors: { max: 1, ignore: ['analytics', 'Widget * failed'] } }).failing).to.equal(false);
    expect(evaluateChecks(report, { maxConsoleErrors: { max: 0, ignore: ['analytics', 'Widget * failed'] } }).failures[0]).to.include({ measured: 1 });
  });

  it('maxConsoleErrors: items beyond the kept ones always count (an ignore pattern cannot see them)', () => {
    const capped = { ...reportWith().console, errors: { total: 1000, items: [{ level: 'error' as const, kind: 'console' as const, message: 'noise' }] } };
    expect(evaluateChecks(reportWith({ console: capped }), { maxConsoleErrors: { max: 0, ignore: ['noise'] } }).failures[0]).to.include({ measured: 999 });
  });

  it('CSP report-only violations and the browser\'s own messages are not console errors', () => {
    const entry = (kind: ConsoleEntry['kind']): ConsoleEntry => ({ level: 'error', kind, message: 'x' });
    const console = { ...reportWith().console, cspReportOnly: { total: 1, items: [entry('csp-report-only')] }, browser: { total: 2, items: [entry('browser')] } };
    expect(evaluateChecks(reportWith({ console }), { maxConsoleErrors: 0 }).failing).to.equal(false);
  });

  it('maxFailedRequests: a number, ignore patterns on URLs, and a bound per resource type', () => {
    const report = reportWith({ failedRequests: failed({ url: 'https://shop.example/app.css', type: 'stylesheet' }, { url: 'https://ads.example/pixel.gif', type: 'image' }) });
    expect(failedChecks(report, { maxFailedRequests: 1 })).to.deep.equal(['maxFailedRequests']);
    expect(failedChecks(report, { maxFailedRequests: { max: 1, ignore: ['https://ads.example/*'] } })).to.deep.equal([]);
    expect(evaluateChecks(report, { maxFailedRequests: { byType: { stylesheet: 0, image: 5, script: 0 } } }).failures).to.deep.equal([
      { check: 'maxFailedRequests.stylesheet', measured: 1, bound: 0, message: '1 failed stylesheet request, at most 0 allowed' },
    ]);
  });

  it('webVitals: a bound in the vital\'s unit or a band; a vital not measured passes', () => {
    const report = reportWith({ vitals: { ...reportWith().vitals, LCP: vital(3100), CLS: vital(0.3, 'score'), FCP: vital(null) } });
    expect(evaluateChecks(report, { webVitals: { LCP: 'good', CLS: 'needs-improvement', FCP: 100 } }).failures).to.deep.equal([
      { check: 'webVitals.LCP', measured: 3100, bound: 2500, message: 'LCP was 3100 ms, at most 2500 ms allowed' },
      { check: 'webVitals.CLS', measured: 0.3, bound: 0.25, message: 'CLS was 0.3, at most 0.25 allowed' },
    ]);
    expect(failedChecks(report, { webVitals: { LCP: 4000 } })).to.deep.equal([]);
  });

  it('maxViolations: nodes at or above each impact, less skipped rules; an audit that did not run fails the check', () => {
    const violation = (id: string, impact: 'critical' | 'serious' | 'minor', count: number) => ({ id, impact, help: id, count, targets: [] });
    const accessibility = { violations: { total: 3, items: [violation('label', 'critical', 2), violation('color-contrast', 'serious', 3), violation('region', 'minor', 9)] } };
    const report = reportWith({ accessibility });
    expect(evaluateChecks(report, { maxViolations: { critical: 0, serious: 4 } }).failures.map((f) => [f.check, f.measured])).to.deep.equal([
      ['maxViolations.critical', 2],
      ['maxViolations.serious', 5],
    ]);
    expect(failedChecks(report, { maxViolations: { serious: 0, skipRules: ['label', 'color-*'] } })).to.deep.equal([]);
    expect(evaluateChecks(reportWith({ accessibility: { error: 'the accessibility audit did not finish within 10000 ms' } }), { maxViolations: { critical: 0 } }).failures[0]).to.include({
      check: 'maxViolations.critical',
      measured: null,
    });
  });

  it('text: must appear, must not appear, in the page or in a selector; a missing element fails contains and passes notContains', () => {
    const report = reportWith();
    expect(failedChecks(report, { text: [{ contains: 'Sold out' }, { notContains: 'Add to' }, { selector: '#price', notContains: 'EUR' }] })).to.deep.equal([
      'text[0].contains',
      'text[1].notContains',
      'text[2].notContains',
    ]);
    expect(evaluateChecks(report, { text: [{ selector: '#gone', contains: 'x', notContains: 'y' }] }).failures).to.deep.equal([
      { check: 'text[0].contains', measured: null, bound: 'x', message: '#gone: no such element' },
    ]);
  });

  it('maxLoadTime: fails over the bound, and when the load event never ended', () => {
    expect(evaluateChecks(reportWith({ loadTimeMs: 4200 }), { maxLoadTime: 3000 }).failures[0]).to.include({ check: 'maxLoadTime', measured: 4200, bound: 3000 });
    expect(evaluateChecks(reportWith({ loadTimeMs: null }), { maxLoadTime: 3000 }).failures[0]).to.include({ measured: null });
  });

  it('the same report and the same checks give the same verdict, and the report is not changed', () => {
    const report = reportWith({ console: errors('a', 'b'), loadTimeMs: 9000 });
    const frozen = JSON.stringify(report);
    const checks: Checks = { maxConsoleErrors: { max: 0, ignore: ['a'] }, maxLoadTime: 1000, webVitals: { LCP: 1000 } };
    const first = evaluateChecks(report, checks);
    expect(evaluateChecks(JSON.parse(frozen) as PageReport, structuredClone(checks))).to.deep.equal(first);
    expect(JSON.stringify(report)).to.equal(frozen);
  });
});

describe('checks: the schema and what a report must hold for them', () => {
  const validate = compileValidator<Checks>(checksSchema, []);

  it('accepts every check as documented', () => {
    const checks = {
      status: [200, 301],
      maxConsoleErrors: { max: 0, ignore: ['favicon'] },
      maxFailedRequests: { max: 2, ignore: ['*/ads/*'], byType: { script: 0 } },
      webVitals: { LCP: 'good', CLS: 0.1, TBT: 300 },
      maxViolations: { critical: 0, serious: 2, skipRules: ['region'] },
      text: [{ selector: 'h1', contains: 'Shop' }, { notContains: 'Error' }],
      maxLoadTime: 5000,
    };
    expect(validate(checks)).to.deep.equal(checks);
  });

  it('refuses unknown checks, a text check that checks nothing, and a band that is no band', () => {
    expect(() => validate({ maxErrors: 0 })).to.throw(/Unknown field: "maxErrors"/);
    expect(() => validate({ text: [{ selector: 'h1' }] })).to.throw(/text\.0/);
    expect(() => validate({ webVitals: { LCP: 'poor' } })).to.throw(/webVitals\.LCP/);
    expect(() => validate({ status: [99] })).to.throw(/status\.0/);
  });

  it('asks axe only for maxViolations (or when asked), and the text of the page and of each selector only for text checks', () => {
    expect(reportRequestFor(undefined)).to.deep.equal({});
    expect(reportRequestFor({ maxConsoleErrors: 0 }, true)).to.deep.equal({ axe: true });
    expect(reportRequestFor({ maxViolations: { serious: 0 }, text: [{ contains: 'a' }, { selector: 'h1', contains: 'b' }, { selector: 'h1', notContains: 'c' }] })).to.deep.equal({
      axe: true,
      text: { page: true, selectors: ['h1'] },
    });
  });
});
