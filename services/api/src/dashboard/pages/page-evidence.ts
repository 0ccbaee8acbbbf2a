import type { MonitorPageResult } from '../../../../../lib/store/monitors.ts';
import { WEB_VITAL_NAMES, WEB_VITALS, type ConsoleEntry, type Counted, type FailedRequest, type PageReport, type VitalReading, type WebVitalName } from '../../../../renderer/src/report/page-report.ts';
import type { CheckFailure, Checks, Verdict } from '../../monitors/checks.ts';
import { html, type SafeHtml } from '../html.ts';
import { waterfall } from '../waterfall.ts';

/**
 * What a run's visit of a page says about whether the page works (issue #40), under its pictures:
 * the checks failed (check, value measured, bound, message) and passed, the console (the page's
 * errors and warnings, kept apart from CSP report-only violations and the browser's own messages),
 * the failed requests, the request waterfall and the Web Vitals with their bands and bounds. Every
 * text here (console messages, URLs, selectors) is the page's to choose and goes through `html`,
 * which escapes it. A run recorded without a report shows none of it.
 */

/** The verdict's failures and passes; the bounds of the passes are read from the checks the page declares now. */
function checksSection(id: string, verdict: Verdict | null, declared: Checks | undefined): SafeHtml {
  if (!verdict) {
    return html`<p class="muted">${declared ? 'No checks were judged in this run.' : 'No checks are declared for this page: the report below is recorded all the same.'}</p>`;
  }
  const total = verdict.failures.length + verdict.passed.length;
  const summary = verdict.failing
    ? html`<p><span class="state state-failing">Failing</span>: ${verdict.failures.length} of ${total} check${total === 1 ? '' : 's'} failed.</p>`
    : html`<p><span class="state state-passing">Passing</span>: ${total === 1 ? 'the check' : `all ${total} checks`} passed.</p>`;
  return html`${summary}
    ${verdict.failures.length > 0 &&
    html`<div class="table-wrap"><table class="stack failures">
      <caption>Checks failed</caption>
      <thead><tr><th scope="col">Check</th><th scope="col">Measured</th><th scope="col">Bound</th><th scope="col">What went wrong</th></tr></thead>
      <tbody>${verdict.failures.map(
        (failure) => html`<tr>
          <th scope="row" data-label="Check"><code>${failure.check}</code></th>
          <td data-label="Measured">${measuredText(failure.measured)}</td>
          <td data-label="Bound">${boundText(failure.bound)}</td>
          <td data-label="What went wrong">${failure.message}</td>
        </tr>`,
      )}</tbody>
    </table></div>`}
    ${verdict.passed.length > 0 &&
    html`<h5 id="${id}-passed">Checks passed</h5>
    <ul class="passed" aria-labelledby="${id}-passed">${verdict.passed.map((check) => {
      const bound = declaredBound(declared, check);
      return html`<li><code>${check}</code>${bound && html`: ${bound}`}</li>`;
    })}</ul>`}`;
}

const measuredText = (measured: CheckFailure['measured']) => (measured === null ? html`<span class="muted">nothing measured</span>` : String(measured));
const boundText = (bound: CheckFailure['bound']) => (Array.isArray(bound) ? bound.join(' or ') : String(bound));

/** A passed check's bound in words, as the page declares it; null when the declaration no longer has it. */
export function declaredBound(checks: Checks | undefined, check: string): string | null {
  if (!checks) return null;
  const atMost = (max: number | undefined, unit = '') => (max === undefined ? null : `at most ${max}${unit}`);
  const counted = (value: number | { max?: number } | undefined) => (typeof value === 'number' ? value : value?.max);
  if (check === 'status') return checks.status ? `status ${checks.status.join(' or ')}` : null;
  if (check === 'maxConsoleErrors') return atMost(counted(checks.maxConsoleErrors));
  if (check === 'maxFailedRequests') return atMost(counted(checks.maxFailedRequests));
  if (check === 'maxLoadTime') return atMost(checks.maxLoadTime, ' ms');
  const [kind, detail] = check.split('.', 2) as [string, string | undefined];
  if (kind === 'maxFailedRequests' && detail !== undefined) {
    const byType = typeof checks.maxFailedRequests === 'object' ? checks.maxFailedRequests.byType : undefined;
    return atMost(byType?.[detail]);
  }
  if (kind === 'webVitals' && detail !== undefined && detail in WEB_VITALS) {
    const name = detail as WebVitalName;
    const bound = checks.webVitals?.[name];
    if (bound === undefined) return null;
    const limit = bound === 'good' ? WEB_VITALS[name].good : bound === 'needs-improvement' ? WEB_VITALS[name].poor : bound;
    return `at most ${vitalValue(name, limit)}${typeof bound === 'string' ? ` (${bound})` : ''}`;
  }
  if (kind === 'maxViolations' && detail !== undefined) return atMost(checks.maxViolations?.[detail as 'critical']);
  const text = /^text\[(\d+)\]\.(contains|notContains)$/.exec(check);
  if (text) {
    const declared = checks.text?.[Number(text[1])];
    const wanted = declared?.[text[2] as 'contains' | 'notContains'];
    if (wanted === undefined) return null;
    return `${declared?.selector ?? 'the page'} ${text[2] === 'contains' ? 'contains' : 'does not contain'} ${JSON.stringify(wanted)}`;
  }
  return null;
}

function vitalValue(name: WebVitalName, value: number): string {
  return WEB_VITALS[name].unit === 'ms' ? `${Math.round(value)} ms` : String(Number(value.toFixed(3)));
}

/** "the first 50 of 1234" when the report kept fewer items than there were. */
function boundedNote(list: Counted<unknown>): SafeHtml {
  return html`${list.total > list.items.length && html`<p class="hint">The report kept the first ${list.items.length} of ${list.total}.</p>`}`;
}

function consoleList(id: string, heading: string, note: string, list: Counted<ConsoleEntry>): SafeHtml {
  return html`<h5 id="${id}">${heading} (${list.total})</h5>
    ${note && html`<p class="hint">${note}</p>`}
    ${list.total === 0
      ? html`<p class="muted">None.</p>`
      : html`${boundedNote(list)}<ol class="console" aria-labelledby="${id}">${list.items.map(
          (entry) => html`<li>
            <code class="message">${entry.message}</code>
            <span class="source">${entry.kind === 'exception' ? 'uncaught exception' : entry.level}${entry.url !== undefined && html` at <span class="url">${entry.url}${entry.line !== undefined && `:${entry.line}`}</span>`}</span>
          </li>`,
        )}</ol>`}`;
}

function consoleSection(id: string, report: PageReport): SafeHtml {
  const { errors, warnings, cspReportOnly, browser } = report.console;
  return html`${consoleList(`${id}-errors`, 'Errors', "The page's console errors and uncaught exceptions: what maxConsoleErrors counts.", errors)}
    ${consoleList(`${id}-warnings`, 'Warnings', '', warnings)}
    ${consoleList(`${id}-csp`, 'CSP report-only violations', 'Reported under Content-Security-Policy-Report-Only: nothing was refused, and they are not counted as errors.', cspReportOnly)}
    ${consoleList(`${id}-browser`, "The browser's own messages", 'What Chromium says by itself (a failed load, the icon): not counted as errors; failed loads are under Failed requests.', browser)}`;
}

function reasonText(request: FailedRequest): string {
  if (request.reason === 'http') return `HTTP ${request.status ?? ''}`.trim();
  if (request.reason === 'blocked') return `blocked before leaving the browser (blockUrls, blockResources or the allowed domains)${request.error ? `: ${request.error}` : ''}`;
  if (request.reason === 'guard') return `refused by the network guard${request.error ? ` (${request.error})` : ''}`;
  return `network error${request.error ? ` ${request.error}` : ''}`;
}

function failedRequestsSection(name: string, list: Counted<FailedRequest>): SafeHtml {
  if (list.total === 0) return html`<p class="muted">None.</p>`;
  return html`${boundedNote(list)}<div class="table-wrap"><table class="stack">
    <caption>Failed requests of page ${name} (${list.total})</caption>
    <thead><tr><th scope="col">URL</th><th scope="col">Type</th><th scope="col">Reason</th></tr></thead>
    <tbody>${list.items.map(
      (request) => html`<tr>
        <td data-label="URL" class="url">${request.url}</td>
        <td data-label="Type">${request.type}</td>
        <td data-label="Reason">${reasonText(request)}</td>
      </tr>`,
    )}</tbody>
  </table></div>`;
}

const RATINGS = { good: 'good', 'needs-improvement': 'needs improvement', poor: 'poor' } as const;

function vitalsSection(name: string, report: PageReport, declared: Checks | undefined): SafeHtml {
  const row = (vital: WebVitalName, reading: VitalReading) => {
    const { good, poor } = WEB_VITALS[vital];
    const bound = declaredBound(declared, `webVitals.${vital}`);
    return html`<tr>
      <th scope="row" data-label="Vital"><abbr title="${WEB_VITALS[vital].description}">${vital}</abbr></th>
      <td data-label="Value">${reading.value === null ? html`<span class="muted">not measured</span>` : vitalValue(vital, reading.value)}</td>
      <td data-label="Rating">${reading.rating === null ? html`<span class="muted">none</span>` : html`<span class="rating rating-${reading.rating}">${RATINGS[reading.rating]}</span>`}</td>
      <td data-label="Bands">good up to ${vitalValue(vital, good)}, poor above ${vitalValue(vital, poor)}</td>
      <td data-label="Check">${bound ?? html`<span class="muted">none</span>`}</td>
    </tr>`;
  };
  return html`<div class="table-wrap"><table class="stack">
    <caption>Web Vitals of page ${name}</caption>
    <thead><tr><th scope="col">Vital</th><th scope="col">Value</th><th scope="col">Rating</th><th scope="col">Bands</th><th scope="col">Check</th></tr></thead>
    <tbody>${WEB_VITAL_NAMES.map((vital) => row(vital, report.vitals[vital]))}</tbody>
  </table></div>`;
}

function documentFacts(report: PageReport): SafeHtml {
  const { document, weight } = report;
  return html`<dl class="facts">
    <dt>Document</dt><dd><span class="url">${document.url}</span>: ${document.status === null ? 'no answer' : `status ${document.status}`}</dd>
    ${document.redirects.length > 0 && html`<dt>Redirects</dt><dd><ol class="redirects">${document.redirects.map((hop) => html`<li>${hop.status} from <span class="url">${hop.url}</span></li>`)}</ol></dd>`}
    <dt>Load time</dt><dd>${report.loadTimeMs === null ? 'the load event had not ended' : `${Math.round(report.loadTimeMs)} ms`}</dd>
    <dt>Weight</dt><dd>${weight.requests} request${weight.requests === 1 ? '' : 's'}, ${weight.bytes} bytes transferred</dd>
  </dl>`;
}

function accessibilitySection(name: string, accessibility: PageReport['accessibility']): SafeHtml {
  if (accessibility === undefined) return html``;
  if ('error' in accessibility) return html`<p class="error-text">The accessibility audit did not run: ${accessibility.error}</p>`;
  const { violations } = accessibility;
  if (violations.total === 0) return html`<p>axe-core found no violation.</p>`;
  return html`${boundedNote(violations)}<div class="table-wrap"><table class="stack">
    <caption>Accessibility violations on page ${name} (axe-core)</caption>
    <thead><tr><th scope="col">Rule</th><th scope="col">Impact</th><th scope="col">Elements</th><th scope="col">First elements</th></tr></thead>
    <tbody>${violations.items.map(
      (violation) => html`<tr>
        <th scope="row" data-label="Rule"><code>${violation.id}</code>: ${violation.help}</th>
        <td data-label="Impact">${violation.impact ?? 'none'}</td>
        <td data-label="Elements">${violation.count}</td>
        <td data-label="First elements">${violation.targets.map((target) => html`<code>${target}</code> `)}</td>
      </tr>`,
    )}</tbody>
  </table></div>`;
}

/** The evidence of one page's visit in a run; nothing for a run recorded without a report. */
export function pageEvidence(name: string, result: MonitorPageResult, declared: Checks | undefined): SafeHtml {
  const report = result.report ?? null;
  if (report === null) return html``;
  const id = `page-${name}`;
  const part = (key: string, heading: string, body: SafeHtml) =>
    html`<section class="evidence" aria-labelledby="${id}-${key}"><h4 id="${id}-${key}">${heading}</h4>${body}</section>`;
  return html`${part('checks', 'Checks', checksSection(`${id}-checks`, result.verdict ?? null, declared))}
    ${part('document', 'Document', documentFacts(report))}
    ${part('console', 'Console', consoleSection(`${id}-console`, report))}
    ${part('failed', `Failed requests (${report.failedRequests.total})`, failedRequestsSection(name, report.failedRequests))}
    ${part('requests', 'Requests', waterfall(`${id}-waterfall`, name, report.timeline))}
    ${part('vitals', 'Web Vitals', vitalsSection(name, report, declared))}
    ${report.accessibility !== undefined && part('accessibility', 'Accessibility', accessibilitySection(name, report.accessibility))}`;
}
