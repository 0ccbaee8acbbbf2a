import type { Context } from 'koa';
import { BadRequest } from '../../../../../lib/errors.ts';
import type { SiteView } from '../../../../../lib/management.ts';
import type { MonitorPage } from '../../../../../lib/store/monitors.ts';
import { DEFAULT_THRESHOLD, MAX_MONITOR_PAGES } from '../../monitors/api-schema.ts';
import type { MonitorView } from '../../monitors/management.ts';
import type { Checks } from '../../monitors/checks.ts';
import { csrfField, errorsFor, formError, selectField, textField, type FieldErrors } from '../fields.ts';
import { field } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';

/**
 * The dashboard's form for a new monitor, read into the management API's create body (which
 * monitors/management.ts validates, with the API's rules and messages). Pages are rows of repeated
 * fields (name, URL, visible area or full page, selectors to hide, and its checks), sent in order; a
 * row left empty is skipped. Each API message is shown next to the field, or the page row, it names.
 *
 * A page's checks (issue #40) are the API's `checks` object: the simple ones as fields of their own
 * (expected statuses, most console errors, longest load time, a text the page must contain) and the
 * rest as JSON, merged into one object that the API's own schema validates (monitors/checks.ts), so
 * that the messages are the API's. The text field is the last of the `text` checks, after the JSON's.
 */
export const MONITOR_FORM_FIELDS = [
  'name',
  'schedule',
  'timeZone',
  'siteId',
  'threshold',
  'baseline',
  'pageName',
  'pageUrl',
  'pageFullPage',
  'pageHideSelectors',
  'pageStatus',
  'pageMaxConsoleErrors',
  'pageMaxLoadTime',
  'pageTextContains',
  'pageChecks',
] as const;
const FULL_ACCESS = '';
const ROWS = 3;

export interface PageRow {
  name: string;
  url: string;
  fullPage: boolean;
  hideSelectors: string;
  /** The checks' fields, as typed: statuses separated by commas or spaces, two numbers, a text, and JSON for the rest. */
  status: string;
  maxConsoleErrors: string;
  maxLoadTime: string;
  textContains: string;
  checks: string;
}

const EMPTY_ROW: PageRow = { name: '', url: '', fullPage: false, hideSelectors: '', status: '', maxConsoleErrors: '', maxLoadTime: '', textContains: '', checks: '' };

export interface MonitorFormValues {
  name: string;
  schedule: string;
  timeZone: string;
  siteId: string;
  threshold: string;
  baseline: string;
  pages: PageRow[];
}

export const NEW_MONITOR: MonitorFormValues = { name: '', schedule: '0 * * * *', timeZone: 'UTC', siteId: FULL_ACCESS, threshold: String(DEFAULT_THRESHOLD), baseline: 'accepted', pages: [] };

const FIELDS = {
  name: /^name\b/,
  schedule: /^schedule\b/,
  timeZone: /^timeZone\b/,
  siteId: /^siteId\b/,
  threshold: /^compare\.threshold\b/,
  baseline: /^compare\.baseline\b/,
  pages: /^(pages\b|page[A-Z]|A monitor has at most|The page rows)/,
};

function list(ctx: Context, name: string): string[] {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** What the form sent, as it was typed (shown again on an error). */
export function formValues(ctx: Context): MonitorFormValues {
  const names = list(ctx, 'pageName');
  const urls = list(ctx, 'pageUrl');
  const fullPages = list(ctx, 'pageFullPage');
  const hides = list(ctx, 'pageHideSelectors');
  // A form without the check fields at all (one rendered before they existed) posts rows without checks.
  const checkField = (name: string) => {
    const values = list(ctx, name);
    return values.length === 0 ? names.map(() => '') : values;
  };
  const [statuses, consoleErrors, loadTimes, texts, checks] = ['pageStatus', 'pageMaxConsoleErrors', 'pageMaxLoadTime', 'pageTextContains', 'pageChecks'].map(checkField) as [string[], string[], string[], string[], string[]];
  if ([urls, fullPages, hides, statuses, consoleErrors, loadTimes, texts, checks].some((values) => values.length !== names.length)) {
    throw new BadRequest(
      'The page rows do not line up (each row sends pageName, pageUrl, pageFullPage, pageHideSelectors, pageStatus, pageMaxConsoleErrors, pageMaxLoadTime, pageTextContains and pageChecks): submit the form from the dashboard page again',
    );
  }
  return {
    name: field(ctx, 'name').trim(),
    schedule: field(ctx, 'schedule').trim(),
    timeZone: field(ctx, 'timeZone').trim(),
    siteId: field(ctx, 'siteId'),
    threshold: field(ctx, 'threshold').trim(),
    baseline: field(ctx, 'baseline'),
    // Rows left empty are skipped (and not shown again).
    pages: names
      .map((name, i) => ({
        name: name.trim(),
        url: (urls[i] ?? '').trim(),
        fullPage: fullPages[i] === 'full',
        hideSelectors: hides[i] ?? '',
        status: statuses[i] ?? '',
        maxConsoleErrors: consoleErrors[i] ?? '',
        maxLoadTime: loadTimes[i] ?? '',
        textContains: texts[i] ?? '',
        checks: checks[i] ?? '',
      }))
      .filter((row) => [row.name, row.url, row.hideSelectors, row.status, row.maxConsoleErrors, row.maxLoadTime, row.textContains, row.checks].some((value) => value.trim() !== '')),
  };
}

/** The management API's create body; the API validates it (an empty field is left out, so its default applies or its absence is named). */
export function createBody(values: MonitorFormValues): Record<string, unknown> {
  const threshold = values.threshold === '' ? undefined : Number(values.threshold);
  if (threshold !== undefined && !Number.isFinite(threshold)) throw new BadRequest('compare.threshold must be a number between 0 and 1, e.g. 0.01 for 1 % of the pixels');
  const hide = (text: string) => text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
  return {
    name: values.name,
    schedule: values.schedule,
    ...(values.timeZone !== '' ? { timeZone: values.timeZone } : {}),
    ...(values.siteId !== FULL_ACCESS ? { siteId: values.siteId } : {}),
    compare: { ...(threshold !== undefined ? { threshold } : {}), baseline: values.baseline },
    pages: values.pages.map((row, index) => {
      const checks = checksOf(row, index);
      return {
        name: row.name,
        url: row.url,
        ...(row.fullPage ? { fullPage: true } : {}),
        ...(hide(row.hideSelectors).length > 0 ? { hideSelectors: hide(row.hideSelectors) } : {}),
        ...(checks !== undefined ? { checks } : {}),
      };
    }),
  };
}

/** A number when the text is one; otherwise the text as typed, for the API's schema to name ("must be number"). */
function numberOrText(text: string): number | string {
  const trimmed = text.trim();
  const number = Number(trimmed);
  return trimmed !== '' && Number.isFinite(number) ? number : trimmed;
}

/** The row's JSON checks, or undefined when the field is empty or not JSON. */
function parsedJson(row: PageRow): unknown {
  if (row.checks.trim() === '') return undefined;
  try {
    return JSON.parse(row.checks) as unknown;
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The page's `checks` as the API takes them: the JSON's, with the fields' added; undefined when the
 * row declares none. Only what the schema cannot see is refused here: JSON that does not parse, and a
 * check given both in its field and in the JSON. Anything else goes as typed, and the API says what is wrong.
 */
function checksOf(row: PageRow, index: number): unknown {
  let checks: unknown = {};
  if (row.checks.trim() !== '') {
    try {
      checks = JSON.parse(row.checks) as unknown;
    } catch (err) {
      throw new BadRequest(`pages[${index}].checks is not valid JSON: ${(err as Error).message}`);
    }
  }
  // Not an object ([], "x", 3): the API's schema says so.
  if (!isObject(checks)) return checks;
  const merged: Record<string, unknown> = { ...checks };
  const set = (key: string, value: unknown) => {
    if (key in merged) throw new BadRequest(`pages[${index}].checks: ${key} is set both in its field and in the JSON: keep one`);
    merged[key] = value;
  };
  if (row.status.trim() !== '') set('status', row.status.split(/[\s,]+/).filter((code) => code !== '').map(numberOrText));
  if (row.maxConsoleErrors.trim() !== '') set('maxConsoleErrors', numberOrText(row.maxConsoleErrors));
  if (row.maxLoadTime.trim() !== '') set('maxLoadTime', numberOrText(row.maxLoadTime));
  if (row.textContains !== '') {
    // After the JSON's text checks, so that the JSON's keep their numbers (text[0], ...) in the API's messages and the verdict.
    if (merged.text === undefined) merged.text = [{ contains: row.textContains }];
    else if (Array.isArray(merged.text)) merged.text = [...(merged.text as unknown[]), { contains: row.textContains }];
    else throw new BadRequest(`pages[${index}].checks: text in the JSON must be a list to add the text field's check to it`);
  }
  return Object.keys(merged).length === 0 ? undefined : merged;
}

/** Declared checks split into the form's fields and JSON for the rest (the inverse of checksOf). */
function checkFieldsOf(declared: Checks | undefined): Pick<PageRow, 'status' | 'maxConsoleErrors' | 'maxLoadTime' | 'textContains' | 'checks'> {
  const { status, maxConsoleErrors, maxLoadTime, text, ...rest } = declared ?? {};
  const others: Record<string, unknown> = rest;
  if (maxConsoleErrors !== undefined && typeof maxConsoleErrors !== 'number') others.maxConsoleErrors = maxConsoleErrors;
  const last = text?.at(-1);
  const textField = last !== undefined && Object.keys(last).length === 1 && typeof last.contains === 'string' ? last.contains : '';
  const otherTexts = textField === '' ? text : text?.slice(0, -1);
  if (otherTexts !== undefined && otherTexts.length > 0) others.text = otherTexts;
  return {
    status: status?.join(', ') ?? '',
    maxConsoleErrors: typeof maxConsoleErrors === 'number' ? String(maxConsoleErrors) : '',
    maxLoadTime: maxLoadTime === undefined ? '' : String(maxLoadTime),
    textContains: textField,
    checks: Object.keys(others).length === 0 ? '' : JSON.stringify(others, null, 2),
  };
}

/** A monitor as the form shows it, for editing. */
export function formOf(monitor: MonitorView): MonitorFormValues {
  return {
    name: monitor.name,
    schedule: monitor.schedule,
    timeZone: monitor.timeZone,
    siteId: monitor.siteId ?? FULL_ACCESS,
    threshold: String(monitor.compare.threshold),
    baseline: monitor.compare.baseline,
    pages: monitor.pages.map((page) => ({
      name: page.name,
      url: page.url,
      fullPage: page.fullPage === true,
      hideSelectors: (page.hideSelectors ?? []).join('\n'),
      ...checkFieldsOf(page.checks),
    })),
  };
}

/**
 * The management API's update body (PATCH): every field of the form, full access as siteId null.
 * `pages` replaces the list, so a page kept under its name keeps the options the form does not show
 * (ignoreRegions, quality, wait... set through the API), with the form's URL, capture, selectors and checks.
 */
export function updateBody(values: MonitorFormValues, current: MonitorView): Record<string, unknown> {
  const body = createBody(values);
  const pages = (body.pages as MonitorPage[]).map((page) => {
    const existing = current.pages.find((candidate) => candidate.name === page.name);
    if (!existing) return page;
    // hasCredentials is the answer's; the credentials themselves stay in the API (keepingCredentials).
    const { fullPage: _fullPage, hideSelectors: _hideSelectors, checks: _checks, hasCredentials: _hasCredentials, ...kept } = existing;
    return { ...kept, ...page };
  });
  return { ...body, siteId: values.siteId === FULL_ACCESS ? null : values.siteId, pages };
}

/** The field of a row's checks that an API message about `pages[i].checks…` is about: a check's own field when it was typed there, else the JSON. */
function checkFieldKey(row: PageRow, index: number, check: string | undefined, item: string | undefined): string {
  const typed = (value: string) => value.trim() !== '';
  if (check === 'status' && typed(row.status)) return `page-${index}-status`;
  if (check === 'maxConsoleErrors' && typed(row.maxConsoleErrors)) return `page-${index}-maxConsoleErrors`;
  if (check === 'maxLoadTime' && typed(row.maxLoadTime)) return `page-${index}-maxLoadTime`;
  if (check === 'text' && row.textContains !== '') {
    const json = parsedJson(row);
    const fromJson = isObject(json) && Array.isArray(json.text) ? json.text.length : 0;
    if (item === undefined || Number(item) === fromJson) return `page-${index}-textContains`;
  }
  return `page-${index}-checks`;
}

/** The row whose JSON checks name `field`: where the API's "Unknown field" (said without a path) belongs. */
function rowNaming(values: MonitorFormValues, field: string): number {
  return values.pages.findIndex((row) => row.checks.includes(JSON.stringify(field)));
}

/** The API's message, split per field; `pages[i]…` and `pages.i…` go to that page's row, or to the field of its checks they name. */
export function monitorFormErrors(message: string, values: MonitorFormValues): FieldErrors {
  const errors: FieldErrors = {};
  for (const part of message.split('; ')) {
    const check = /^pages(?:\[|\.)(\d+)\]?\.checks(?:\.([A-Za-z]+)(?:[.[](\d+))?)?/.exec(part);
    const unknown = /^Unknown field: "(.*)"$/.exec(part);
    const unknownRow = unknown ? rowNaming(values, unknown[1] as string) : -1;
    const page = /^pages(?:\[|\.)(\d+)/.exec(part);
    const row = check ? values.pages[Number(check[1])] : undefined;
    const key = check && row
      ? checkFieldKey(row, Number(check[1]), check[2], check[3])
      : unknownRow >= 0
        ? `page-${unknownRow}-checks`
        : page && Number(page[1]) < values.pages.length
          ? `page-${page[1]}`
          : (Object.keys(errorsFor(part, FIELDS))[0] ?? 'form');
    errors[key] = errors[key] ? `${errors[key]}; ${part}` : part;
  }
  return errors;
}

function pageRow(row: PageRow, index: number, errors: FieldErrors): SafeHtml {
  const error = errors[`page-${index}`];
  const n = index + 1;
  const id = `page-${index}`;
  return html`<fieldset class="page-row${error ? ' has-error' : ''}"${error && html` aria-describedby="${id}-error"`}>
    <legend>Page ${n}</legend>
    ${error && html`<p class="error" id="${id}-error">${error}</p>`}
    <div class="field"><label for="${id}-name">Name of page ${n}</label>
      <input id="${id}-name" name="pageName" type="text" value="${row.name}" aria-describedby="page-name-hint"${error ? html` aria-invalid="true"` : ''}></div>
    <div class="field"><label for="${id}-url">URL of page ${n}</label>
      <input id="${id}-url" name="pageUrl" type="url" value="${row.url}"${error ? html` aria-invalid="true"` : ''}></div>
    <div class="field"><label for="${id}-full">Capture of page ${n}</label>
      <select id="${id}-full" name="pageFullPage">
        <option value="viewport"${!row.fullPage && html` selected`}>The visible area</option>
        <option value="full"${row.fullPage && html` selected`}>The full page</option>
      </select></div>
    <div class="field wide"><label for="${id}-hide">Selectors to hide on page ${n}</label>
      <textarea id="${id}-hide" name="pageHideSelectors" rows="2" aria-describedby="page-hide-hint">${row.hideSelectors}</textarea></div>
    ${checkFields(row, index, errors)}
  </fieldset>`;
}

/** One of a row's check fields, its error under it, tied to it (aria-describedby, aria-invalid). */
function checkField(options: { id: string; key: string; label: string; name: string; value: string; hint: string; errors: FieldErrors; multiline?: boolean }): SafeHtml {
  const error = options.errors[options.key];
  const describedBy = [options.hint, error ? `${options.id}-error` : ''].filter(Boolean).join(' ');
  const common = html`id="${options.id}" name="${options.name}" aria-describedby="${describedBy}"${error && html` aria-invalid="true"`}`;
  return html`<div class="field${options.multiline ? ' wide' : ''}${error ? ' has-error' : ''}"><label for="${options.id}">${options.label}</label>
    ${options.multiline ? html`<textarea ${common} rows="3" spellcheck="false">${options.value}</textarea>` : html`<input ${common} type="text"${options.name !== 'pageTextContains' && html` inputmode="numeric"`} value="${options.value}">`}
    ${error && html`<p class="error" id="${options.id}-error">${error}</p>`}</div>`;
}

function checkFields(row: PageRow, index: number, errors: FieldErrors): SafeHtml {
  const n = index + 1;
  const id = `page-${index}`;
  const field = (key: 'status' | 'maxConsoleErrors' | 'maxLoadTime' | 'textContains' | 'checks', name: string, label: string, hint: string, multiline = false) =>
    checkField({ id: `${id}-${key}`, key: `${id}-${key}`, label, name, value: row[key], hint, errors, multiline });
  return html`<fieldset class="checks">
    <legend>Checks of page ${n}</legend>
    ${field('status', 'pageStatus', `Expected statuses of page ${n}`, 'checks-status-hint')}
    ${field('maxConsoleErrors', 'pageMaxConsoleErrors', `Most console errors on page ${n}`, 'checks-console-hint')}
    ${field('maxLoadTime', 'pageMaxLoadTime', `Longest load time of page ${n} (ms)`, 'checks-load-hint')}
    ${field('textContains', 'pageTextContains', `Text page ${n} must contain`, 'checks-text-hint')}
    ${field('checks', 'pageChecks', `Other checks of page ${n} (JSON)`, 'checks-json-hint', true)}
  </fieldset>`;
}

/** Where the form posts, its button, and how many page rows it shows at least (?rows= on `path`, its own page). */
export interface MonitorFormTarget {
  action: string;
  submit: string;
  path: string;
  rows: number;
  /** Said under Pages. */
  pagesNote?: string;
}

export function monitorForm(csrfToken: string, sites: SiteView[], values: MonitorFormValues, errors: FieldErrors, target: MonitorFormTarget): SafeHtml {
  const shown = [...values.pages];
  // The rows filled in, and at least one empty one to add a page (up to the limit).
  const rows = Math.min(MAX_MONITOR_PAGES, Math.max(target.rows, shown.length + 1, ROWS));
  while (shown.length < rows) shown.push({ ...EMPTY_ROW });
  return html`<form method="post" action="${target.action}" novalidate>
    ${formError(errors)}
    ${csrfField(csrfToken)}
    ${textField({ label: 'Name', name: 'name', value: values.name, required: true, hint: 'Lower-case letters, digits and hyphens (a DNS label), unique in your account; metrics and alerts name the monitor by it.', errors })}
    ${textField({ label: 'Schedule', name: 'schedule', value: values.schedule, required: true, hint: 'Five-field cron (minute hour day-of-month month day-of-week), e.g. */15 * * * * for every 15 minutes, or @hourly, @daily.', errors })}
    ${textField({ label: 'Time zone', name: 'timeZone', value: values.timeZone, hint: 'The IANA time zone the schedule is read in, e.g. UTC or Europe/Paris.', errors })}
    ${selectField({
      label: 'Access',
      name: 'siteId',
      value: values.siteId,
      errors,
      hint: "With a site, only its allowed domains may be captured, and captures count against it.",
      choices: [{ value: FULL_ACCESS, label: 'Full access: any URL' }, ...sites.map((site) => ({ value: site.id, label: `Site: ${site.name}` }))],
    })}
    ${textField({ label: 'Threshold', name: 'threshold', type: 'number', value: values.threshold, hint: 'The share of pixels (0 to 1) that may differ before a page counts as changed: 0.01 is 1 %.', errors })}
    ${selectField({
      label: 'Compare with',
      name: 'baseline',
      value: values.baseline,
      errors,
      choices: [
        { value: 'accepted', label: 'The accepted baseline (the first picture, until you accept another)' },
        { value: 'previous', label: 'The previous run' },
      ],
    })}
    <fieldset class="pages${errors.pages ? ' has-error' : ''}" aria-describedby="pages-hint${errors.pages ? ' field-pages-error' : ''}">
      <legend>Pages</legend>
      <p class="hint" id="pages-hint">At most ${MAX_MONITOR_PAGES} pages; rows left empty are skipped. ${shown.length < MAX_MONITOR_PAGES && html`<a href="${target.path}?rows=${Math.min(MAX_MONITOR_PAGES, shown.length + 5)}">Show more rows</a> (what you typed is not kept).`}${target.pagesNote && ` ${target.pagesNote}`}</p>
      <p class="hint" id="page-name-hint">A page's name: a DNS label, unique in the monitor, e.g. home.</p>
      <p class="hint" id="page-hide-hint">One CSS selector per line, e.g. .clock: hidden before the capture (clocks, carousels, ads).</p>
      <p class="hint" id="checks-hint">Checks say whether a page works; a run's page fails when one fails. Leave a field empty for no such check.</p>
      <p class="hint" id="checks-status-hint">Expected statuses: the main document's final HTTP status must be one of these, e.g. 200 or 200, 304.</p>
      <p class="hint" id="checks-console-hint">Most console errors: console errors and uncaught exceptions allowed (CSP report-only and the browser's own messages never count), e.g. 0.</p>
      <p class="hint" id="checks-load-hint">Longest load time: milliseconds from navigation start to the end of the load event, e.g. 3000.</p>
      <p class="hint" id="checks-text-hint">Text it must contain: the page's text must include it, e.g. Add to cart.</p>
      <p class="hint" id="checks-json-hint">Other checks, as a JSON object in the API's terms (docs/capture-options.md, Checks), e.g. {"maxFailedRequests": 0, "webVitals": {"LCP": "good"}, "text": [{"selector": "#price", "notContains": "Error"}]}; a check goes in its field or here, not both.</p>
      ${errors.pages && html`<p class="error" id="field-pages-error">${errors.pages}</p>`}
      ${shown.map((row, index) => pageRow(row, index, errors))}
    </fieldset>
    <button type="submit" class="primary">${target.submit}</button>
  </form>`;
}
