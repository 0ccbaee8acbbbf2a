import type { Context } from 'koa';
import { BadRequest } from '../../../../../lib/errors.ts';
import type { SiteView } from '../../../../../lib/management.ts';
import type { MonitorPage } from '../../../../../lib/store/monitors.ts';
import { DEFAULT_THRESHOLD, MAX_MONITOR_PAGES } from '../../monitors/api-schema.ts';
import type { MonitorView } from '../../monitors/management.ts';
import { csrfField, errorsFor, formError, selectField, textField, type FieldErrors } from '../fields.ts';
import { field } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';

/**
 * The dashboard's form for a new monitor, read into the management API's create body (which
 * monitors/management.ts validates, with the API's rules and messages). Pages are rows of repeated
 * fields (name, URL, visible area or full page, selectors to hide), sent in order; a row left empty
 * is skipped. Each API message is shown next to the field, or the page row, it names.
 */
export const MONITOR_FORM_FIELDS = ['name', 'schedule', 'timeZone', 'siteId', 'threshold', 'baseline', 'pageName', 'pageUrl', 'pageFullPage', 'pageHideSelectors'] as const;
const FULL_ACCESS = '';
const ROWS = 3;

export interface PageRow {
  name: string;
  url: string;
  fullPage: boolean;
  hideSelectors: string;
}

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
  if (urls.length !== names.length || fullPages.length !== names.length || hides.length !== names.length) {
    throw new BadRequest('The page rows do not line up (each row sends pageName, pageUrl, pageFullPage and pageHideSelectors): submit the form from the dashboard page again');
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
      .map((name, i) => ({ name: name.trim(), url: (urls[i] ?? '').trim(), fullPage: fullPages[i] === 'full', hideSelectors: hides[i] ?? '' }))
      .filter((row) => row.name !== '' || row.url !== '' || row.hideSelectors.trim() !== ''),
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
    pages: values.pages.map((row) => ({
      name: row.name,
      url: row.url,
      ...(row.fullPage ? { fullPage: true } : {}),
      ...(hide(row.hideSelectors).length > 0 ? { hideSelectors: hide(row.hideSelectors) } : {}),
    })),
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
    pages: monitor.pages.map((page) => ({ name: page.name, url: page.url, fullPage: page.fullPage === true, hideSelectors: (page.hideSelectors ?? []).join('\n') })),
  };
}

/**
 * The management API's update body (PATCH): every field of the form, full access as siteId null.
 * `pages` replaces the list, so a page kept under its name keeps the options the form does not show
 * (ignoreRegions, quality, wait... set through the API), with the form's URL, capture and selectors.
 */
export function updateBody(values: MonitorFormValues, current: MonitorView): Record<string, unknown> {
  const body = createBody(values);
  const pages = (body.pages as MonitorPage[]).map((page) => {
    const existing = current.pages.find((candidate) => candidate.name === page.name);
    if (!existing) return page;
    // hasCredentials is the answer's; the credentials themselves stay in the API (keepingCredentials).
    const { fullPage: _fullPage, hideSelectors: _hideSelectors, hasCredentials: _hasCredentials, ...kept } = existing;
    return { ...kept, ...page };
  });
  return { ...body, siteId: values.siteId === FULL_ACCESS ? null : values.siteId, pages };
}

/** The API's message, split per field; `pages[i]…` and `pages.i…` go to that page's row. */
export function monitorFormErrors(message: string, values: MonitorFormValues): FieldErrors {
  const errors: FieldErrors = {};
  for (const part of message.split('; ')) {
    const page = /^pages(?:\[|\.)(\d+)/.exec(part);
    const key = page && Number(page[1]) < values.pages.length ? `page-${page[1]}` : (Object.keys(errorsFor(part, FIELDS))[0] ?? 'form');
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
    <div class="field"><label for="${id}-hide">Selectors to hide on page ${n}</label>
      <textarea id="${id}-hide" name="pageHideSelectors" rows="2" aria-describedby="page-hide-hint">${row.hideSelectors}</textarea></div>
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
  while (shown.length < rows) shown.push({ name: '', url: '', fullPage: false, hideSelectors: '' });
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
      ${errors.pages && html`<p class="error" id="field-pages-error">${errors.pages}</p>`}
      ${shown.map((row, index) => pageRow(row, index, errors))}
    </fieldset>
    <button type="submit" class="primary">${target.submit}</button>
  </form>`;
}
