import { BadRequest, NotFound, ServiceUnavailable } from '../../../../../lib/errors.ts';
import type { SiteView } from '../../../../../lib/management.ts';
import type { MonitorRegion } from '../../../../../lib/store/monitors.ts';
import { readPngSize, type PngSize } from '../../../../renderer/src/capture/png.ts';
import { monitorOperations, runView, type MonitorView } from '../../monitors/management.ts';
import { MONITOR_RUN_JOB, type MonitorService } from '../../monitors/service.ts';
import { lineChart, percent } from '../chart.ts';
import type { DashboardDeps, PageContext, PageHandler } from '../deps.ts';
import { csrfField, type FieldErrors } from '../fields.ts';
import { checkFormText, field } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { errorStatus, managedNote, notice, timestamp, userMessage } from './common.ts';
import { pageEvidence } from './page-evidence.ts';
import { createBody, formOf, formValues, monitorForm, monitorFormErrors, NEW_MONITOR, updateBody, type MonitorFormValues } from './monitor-form.ts';

/**
 * Monitors: the account's page monitors with their last run; a monitor's page with, for each of its
 * pages, the baseline, the capture and the diff picture of a run side by side and the history of its
 * diff ratios, and what the visit measured (page-evidence.ts: checks, console, failed requests,
 * waterfall, Web Vitals); the actions Run now and Accept as baseline (for every monitor), and create, suspend,
 * edit, suspend, resume and delete (for the ones the operator does not own). Everything goes through the
 * management API's monitor operations (monitors/management.ts), so the rules are the API's.
 */
type RunView = ReturnType<typeof runView>;
type PageResult = RunView['pages'][number];
export { MONITOR_FORM_FIELDS } from './monitor-form.ts';
export const ACCEPT_FORM_FIELDS = ['runId', 'page'] as const;
export const SUSPEND_FORM_FIELDS = ['suspend'] as const;
/** While a run is queued or running, the monitor's page reloads itself this often (dashboard.js). */
const RELOAD_SECONDS = 3;
const REGIONS_SHOWN = 10;

function service(deps: DashboardDeps): MonitorService {
  if (!deps.monitors) throw new ServiceUnavailable('Page monitors are not running on this API');
  return deps.monitors;
}

function operations(deps: DashboardDeps, page: PageContext) {
  return monitorOperations(deps.store, service(deps), page.signedIn.account.id);
}

const monitorId = (page: PageContext) => String(page.ctx.params.monitorId);
const shortTime = (iso: string) => `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;

/** A run queued and due, or running, per monitor id: what "in progress" shows. */
async function runsInProgress(deps: DashboardDeps, accountId: string): Promise<Map<string, 'queued' | 'running'>> {
  const now = Date.now();
  const states = new Map<string, 'queued' | 'running'>();
  for (const job of await deps.store.listJobs(accountId, MONITOR_RUN_JOB, 200)) {
    const id = String(job.payload.monitorId);
    if (job.state === 'running') states.set(id, 'running');
    else if (job.state === 'queued' && job.runAt.getTime() <= now && !states.has(id)) states.set(id, 'queued');
  }
  return states;
}

const OUTCOMES = ['failed', 'changed', 'baseline', 'unchanged'] as const;

/** A run in a few words: its worst outcome, and on how many pages; then whether pages failed their checks (a different outcome from a changed picture). */
function runOutcome(run: RunView): string {
  const worst = OUTCOMES.find((outcome) => run.pages.some((result) => result.outcome === outcome)) ?? 'unchanged';
  const count = run.pages.filter((result) => result.outcome === worst).length;
  const pages = (n: number) => `${n} of ${run.pages.length} ${run.pages.length === 1 ? 'page' : 'pages'}`;
  const failing = run.pages.filter((result) => result.verdict?.failing).length;
  const checks = failing > 0 ? `; checks failing (${pages(failing)})` : '';
  if (worst === 'unchanged') return `unchanged${checks}`;
  if (worst === 'baseline') return `baseline taken${checks}`;
  return `${worst} (${pages(count)})${checks}`;
}

function largestDiff(run: RunView | undefined): number | null {
  const ratios = (run?.pages ?? []).map((result) => result.diffRatio).filter((ratio): ratio is number => ratio !== null);
  return ratios.length === 0 ? null : Math.max(...ratios);
}

const ratioText = (ratio: number | null) => (ratio === null ? html`<span class="muted">none</span>` : percent(ratio));

function owner(monitor: MonitorView): string {
  return monitor.managedBy ? `Kubernetes: PageMonitor ${monitor.managedBy.namespace}/${monitor.managedBy.name}` : 'You (dashboard or management API)';
}

function access(sites: SiteView[], siteId: string | null): string {
  if (siteId === null) return 'Full access';
  return `Site: ${sites.find((site) => site.id === siteId)?.name ?? siteId}`;
}

function stateText(monitor: MonitorView, progress: 'queued' | 'running' | undefined): SafeHtml {
  return html`${monitor.suspend ? 'Suspended' : 'Active'}${progress && html`<br><span class="state state-${progress}">run ${progress}</span>`}`;
}

function monitorRow(monitor: MonitorView, last: RunView | undefined, progress: 'queued' | 'running' | undefined): SafeHtml {
  return html`<tr>
    <th scope="row" data-label="Name"><a href="/dashboard/monitors/${monitor.id}">${monitor.name}</a></th>
    <td data-label="Schedule"><code>${monitor.schedule}</code> ${monitor.timeZone}</td>
    <td data-label="Next run">${monitor.nextRunAt === null ? html`<span class="muted">none (suspended)</span>` : timestamp(monitor.nextRunAt)}</td>
    <td data-label="Last run">${last ? html`${timestamp(last.finishedAt)}<br>${runOutcome(last)}` : html`<span class="muted">never</span>`}</td>
    <td data-label="Largest diff">${ratioText(largestDiff(last))}</td>
    <td data-label="State">${stateText(monitor, progress)}</td>
    <td data-label="Owner">${owner(monitor)}</td>
  </tr>`;
}

export function showMonitors(deps: DashboardDeps): PageHandler {
  return async (page) => {
    if (!deps.monitors) {
      page.send('Monitors', html`<p>Page monitors are not running on this API.</p>`);
      return;
    }
    const ops = operations(deps, page);
    const monitors = await ops.list();
    const [lastRuns, progress] = await Promise.all([
      // The newest run of each: the list's monitors are the account's already (ops.list).
      Promise.all(monitors.map(async (monitor) => (await deps.store.listMonitorRuns(monitor.id, 1)).map(runView)[0])),
      runsInProgress(deps, page.signedIn.account.id),
    ]);
    page.send(
      'Monitors',
      html`${notice(page.ctx.query)}
      <p>A monitor captures its pages on a schedule and compares each picture with the page's baseline. <a href="/dashboard/monitors/new">Create a monitor</a></p>
      ${monitors.length === 0
        ? html`<p>No monitors yet.</p>`
        : html`<div class="table-wrap"><table class="stack">
            <caption>Your monitors</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Schedule</th><th scope="col">Next run</th><th scope="col">Last run</th><th scope="col">Largest diff</th><th scope="col">State</th><th scope="col">Owner</th></tr></thead>
            <tbody>${monitors.map((monitor, i) => monitorRow(monitor, lastRuns[i], progress.get(monitor.id)))}</tbody>
          </table></div>`}`,
    );
  };
}

function rowsWanted(page: PageContext): number {
  const rows = Number(page.ctx.query.rows);
  return Number.isInteger(rows) ? rows : 0;
}

function newMonitorPage(page: PageContext, sites: SiteView[], values: MonitorFormValues, errors: FieldErrors = {}, status = 200): void {
  const target = { action: '/dashboard/monitors', submit: 'Create monitor', path: '/dashboard/monitors/new', rows: rowsWanted(page) };
  page.send(
    'Create a monitor',
    html`<p><a href="/dashboard/monitors">Back to monitors</a></p>
    <section class="card" aria-label="New monitor">${monitorForm(page.csrfToken, sites, values, errors, target)}</section>`,
    status,
  );
}

export function showNewMonitor(deps: DashboardDeps): PageHandler {
  return async (page) => {
    service(deps);
    newMonitorPage(page, await page.ops.listSites(), NEW_MONITOR);
  };
}

export function createMonitor(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const ops = operations(deps, page);
    const values = formValues(page.ctx);
    let id: string;
    try {
      checkFormText(page.ctx);
      id = (await ops.create(createBody(values))).id;
    } catch (err) {
      newMonitorPage(page, await page.ops.listSites(), values, monitorFormErrors(userMessage(err), values), errorStatus(err));
      return;
    }
    page.redirect(`/dashboard/monitors/${id}?notice=monitor-created`);
  };
}

function editMonitorPage(page: PageContext, monitor: MonitorView, sites: SiteView[], values: MonitorFormValues, errors: FieldErrors = {}, status = 200): void {
  const path = `/dashboard/monitors/${monitor.id}/edit`;
  const pagesNote = 'A page kept under its name keeps the options set through the API (ignoreRegions, quality, wait…).';
  page.send(
    `Edit monitor ${monitor.name}`,
    html`<p><a href="/dashboard/monitors/${monitor.id}">Back to the monitor</a></p>
    ${monitor.managedBy
      ? managedNote(monitor.managedBy)
      : html`<section class="card" aria-label="Monitor settings">${monitorForm(page.csrfToken, sites, values, errors, { action: path, submit: 'Save', path, rows: rowsWanted(page), pagesNote })}</section>`}`,
    status,
  );
}

export function showMonitorEdit(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const monitor = await operations(deps, page).get(monitorId(page));
    editMonitorPage(page, monitor, await page.ops.listSites(), formOf(monitor));
  };
}

export function updateMonitor(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const ops = operations(deps, page);
    const monitor = await ops.get(monitorId(page));
    const values = formValues(page.ctx);
    try {
      checkFormText(page.ctx);
      await ops.update(monitor.id, updateBody(values, monitor));
    } catch (err) {
      editMonitorPage(page, monitor, await page.ops.listSites(), values, monitorFormErrors(userMessage(err), values), errorStatus(err));
      return;
    }
    page.redirect(`/dashboard/monitors/${monitor.id}?notice=monitor-updated`);
  };
}

/** A picture of the monitor, served by this dashboard with the session's account; its size keeps the layout from moving while it loads. */
function picture(monitor: MonitorView, imageId: string | null, size: PngSize | undefined, caption: string, alt: string): SafeHtml {
  if (imageId === null || size === undefined) return html`<figure class="picture"><div class="no-picture">None</div><figcaption>${caption}</figcaption></figure>`;
  const src = `/dashboard/monitors/${monitor.id}/images/${imageId}`;
  return html`<figure class="picture">
    <a href="${src}"><img src="${src}" alt="${alt}" width="${size.width}" height="${size.height}" loading="lazy"></a>
    <figcaption>${caption}</figcaption>
  </figure>`;
}

function regionList(regions: MonitorRegion[]): SafeHtml {
  if (regions.length === 0) return html`<span class="muted">none</span>`;
  const shown = regions.slice(0, REGIONS_SHOWN).map((r) => html`<li>${r.width}×${r.height} at ${r.left}, ${r.top}</li>`);
  return html`<ul class="regions">${shown}${regions.length > REGIONS_SHOWN && html`<li>and ${regions.length - REGIONS_SHOWN} more</li>`}</ul>`;
}

function acceptForm(page: PageContext, monitor: MonitorView, run: RunView, result: PageResult): SafeHtml {
  if (result.captureImageId === null) return html``;
  if (monitor.baselines[result.page] === result.captureImageId) return html`<p class="hint">This capture is the page's baseline.</p>`;
  return html`<form method="post" action="/dashboard/monitors/${monitor.id}/baseline" class="actions">
    ${csrfField(page.csrfToken)}
    <input type="hidden" name="runId" value="${run.id}">
    <input type="hidden" name="page" value="${result.page}">
    <button type="submit">Accept as baseline<span class="visually-hidden"> for page ${result.page}</span></button>
  </form>`;
}

function pageSection(page: PageContext, monitor: MonitorView, runs: RunView[], run: RunView | undefined, name: string, sizes: Map<string, PngSize>): SafeHtml {
  const declared = monitor.pages.find((candidate) => candidate.name === name);
  const result = run?.pages.find((candidate) => candidate.page === name);
  const when = run ? `the run of ${shortTime(run.finishedAt)} UTC` : '';
  const size = (id: string | null) => (id === null ? undefined : sizes.get(id));
  return html`<section class="monitor-page" aria-labelledby="page-${name}">
    <h3 id="page-${name}">Page ${name}</h3>
    ${declared && html`<p class="url">${declared.url}</p>`}
    ${!result
      ? html`<p class="muted">Not captured in this run.</p>`
      : html`<dl class="facts">
          <dt>Outcome</dt><dd><span class="state state-${result.outcome}">${result.outcome}</span></dd>
          <dt>Diff ratio</dt><dd>${ratioText(result.diffRatio)} <span class="muted">(threshold ${percent(monitor.compare.threshold)})</span></dd>
          <dt>Changed regions</dt><dd>${regionList(result.regions)}</dd>
          ${result.error !== null && html`<dt>Error</dt><dd class="error-text">${result.error}</dd>`}
          ${result.verdict && html`<dt>Checks</dt><dd>${checksText(result)}</dd>`}
        </dl>
        <div class="pictures">
          ${picture(monitor, result.baselineImageId, size(result.baselineImageId), 'Baseline', `Baseline of page ${name}: the picture ${when} compared with`)}
          ${picture(monitor, result.captureImageId, size(result.captureImageId), 'Capture', `Capture of page ${name} in ${when}`)}
          ${picture(monitor, result.diffImageId, size(result.diffImageId), 'Differences', `Differences on page ${name} in ${when}: changed pixels in red over the faded baseline`)}
        </div>
        ${acceptForm(page, monitor, run as RunView, result)}
        ${result.journey && journeySection(monitor, name, result.journey, size(result.journey.failureImageId ?? null), when)}
        ${pageEvidence(name, result, declared?.checks)}`}
    ${historyChart(monitor, name, runs)}
  </section>`;
}

/**
 * The page's journey in the run (issue #41): each step as the run recorded it (what it acted on,
 * never a value typed), its status and time, the reason of the one that failed, and the picture of
 * the page at that moment.
 */
function journeySection(monitor: MonitorView, name: string, journey: NonNullable<PageResult['journey']>, size: PngSize | undefined, when: string): SafeHtml {
  const failed = journey.failedStep;
  return html`<section class="evidence" aria-labelledby="page-${name}-journey">
    <h4 id="page-${name}-journey">Journey</h4>
    <p>${failed === undefined
      ? html`<span class="state state-passing">Passing</span>: all ${journey.steps.length} steps ran.`
      : html`<span class="state state-failing">Failing</span>: step ${failed + 1} of ${journey.steps.length} failed; the steps after it did not run.`}</p>
    <div class="table-wrap"><table class="stack journey">
      <caption>Steps of page ${name}</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Action</th><th scope="col">On</th><th scope="col">Status</th><th scope="col">Time</th><th scope="col">Why it failed</th></tr></thead>
      <tbody>${journey.steps.map(
        (step, i) => html`<tr>
          <th scope="row" data-label="#">${i + 1}</th>
          <td data-label="Action"><code>${step.action}</code>${step.key !== undefined && html` <code>${step.key}</code>`}</td>
          <td data-label="On">${[step.selector, step.url, step.name].filter((what) => what !== undefined).join(' ')}</td>
          <td data-label="Status"><span class="state state-${step.status === 'ok' ? 'passing' : step.status === 'failed' ? 'failing' : 'skipped'}">${step.status}</span></td>
          <td data-label="Time">${step.durationMs === undefined ? html`<span class="muted">not run</span>` : `${step.durationMs} ms`}</td>
          <td data-label="Why it failed">${step.reason ?? ''}</td>
        </tr>`,
      )}</tbody>
    </table></div>
    ${journey.failureImageId !== undefined &&
    html`<div class="pictures">${picture(monitor, journey.failureImageId, size, `When step ${(failed ?? 0) + 1} failed`, `Page ${name} when step ${(failed ?? 0) + 1} of its journey failed, in ${when}`)}</div>`}
  </section>`;
}

/** Whether the run's page passed its checks, in a few words (a changed page and a failing page are different outcomes). */
function checksText(result: PageResult): SafeHtml {
  const verdict = result.verdict;
  if (!verdict) return html``;
  if (!verdict.failing) return html`<span class="state state-passing">passing</span>`;
  return html`<span class="state state-failing">failing</span> (${verdict.failures.map((failure) => failure.check).join(', ')})`;
}

/** The page's diff ratios over the kept runs, oldest first, with the threshold; the runs table below has the same figures. */
function historyChart(monitor: MonitorView, name: string, runs: RunView[]): SafeHtml {
  const oldestFirst = [...runs].reverse();
  const points = oldestFirst.map((run) => ({ label: shortTime(run.finishedAt), value: run.pages.find((result) => result.page === name)?.diffRatio ?? null }));
  if (points.every((point) => point.value === null)) return html`<p class="muted">No diff ratio yet: the first run takes the baseline.</p>`;
  const figures = oldestFirst
    .map((run, i) => {
      const result = run.pages.find((candidate) => candidate.page === name);
      return `${points[i]?.label}: ${result?.diffRatio === null || result === undefined ? `no ratio (${result?.outcome ?? 'not captured'})` : `${percent(result.diffRatio)} (${result.outcome})`}`;
    })
    .join('; ');
  return lineChart(
    `chart-${name}`,
    `Diff ratio of page ${name} over the last ${runs.length} runs (UTC)`,
    `Threshold ${percent(monitor.compare.threshold)}. ${figures}.`,
    points,
    monitor.compare.threshold,
  );
}

function runsTable(monitor: MonitorView, runs: RunView[], shown: RunView | undefined): SafeHtml {
  if (runs.length === 0) return html`<p>No runs yet.</p>`;
  return html`<div class="table-wrap"><table class="stack" id="runs">
    <caption>Kept runs, newest first (at most ${monitor.historyLimit})</caption>
    <thead><tr><th scope="col">Finished</th><th scope="col">Trigger</th><th scope="col">Outcome</th><th scope="col">Largest diff</th>${monitor.pages.map((p) => html`<th scope="col">${p.name}</th>`)}</tr></thead>
    <tbody>${runs.map(
      (run) => html`<tr${run.id === shown?.id && html` class="current"`}>
        <th scope="row" data-label="Finished">${run.id === shown?.id ? html`${timestamp(run.finishedAt)} <span class="muted">(shown)</span>` : html`<a href="/dashboard/monitors/${monitor.id}?run=${run.id}">${timestamp(run.finishedAt)}</a>`}</th>
        <td data-label="Trigger">${run.trigger === 'manual' ? 'Run now' : 'Schedule'}</td>
        <td data-label="Outcome">${runOutcome(run)}</td>
        <td data-label="Largest diff">${ratioText(largestDiff(run))}</td>
        ${monitor.pages.map((p) => {
          const result = run.pages.find((candidate) => candidate.page === p.name);
          return html`<td data-label="${p.name}">${result ? html`${result.outcome}${result.diffRatio !== null && html`, ${percent(result.diffRatio)}`}${result.verdict?.failing && html`, checks failing`}` : html`<span class="muted">—</span>`}</td>`;
        })}
      </tr>`,
    )}</tbody>
  </table></div>`;
}

function actions(page: PageContext, monitor: MonitorView): SafeHtml {
  const runNow = html`<form method="post" action="/dashboard/monitors/${monitor.id}/run">${csrfField(page.csrfToken)}<button type="submit" class="primary">Run now</button></form>`;
  if (monitor.managedBy) return html`<div class="actions">${runNow}</div>${managedNote(monitor.managedBy)}`;
  return html`<div class="actions">
    ${runNow}
    <form method="post" action="/dashboard/monitors/${monitor.id}/suspend">
      ${csrfField(page.csrfToken)}
      <input type="hidden" name="suspend" value="${monitor.suspend ? 'false' : 'true'}">
      <button type="submit">${monitor.suspend ? 'Resume' : 'Suspend'}</button>
    </form>
    <a href="/dashboard/monitors/${monitor.id}/edit">Edit<span class="visually-hidden"> monitor ${monitor.name}</span></a>
    <a href="/dashboard/monitors/${monitor.id}/delete">Delete<span class="visually-hidden"> monitor ${monitor.name}</span></a>
  </div>`;
}

/** The pixel sizes of the pictures shown, read from their PNG headers. */
async function pictureSizes(deps: DashboardDeps, run: RunView | undefined): Promise<Map<string, PngSize>> {
  const ids = [
    ...new Set(
      (run?.pages ?? []).flatMap((result) => [result.baselineImageId, result.captureImageId, result.diffImageId, result.journey?.failureImageId ?? null]).filter((id): id is string => id !== null),
    ),
  ];
  const sizes = new Map<string, PngSize>();
  await Promise.all(
    ids.map(async (id) => {
      const png = await service(deps).images.get(id);
      try {
        if (png) sizes.set(id, readPngSize(png));
      } catch {
        // Not a PNG (a damaged file): shown as no picture rather than failing the page.
      }
    }),
  );
  return sizes;
}

export function showMonitor(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const ops = operations(deps, page);
    const monitor = await ops.get(monitorId(page));
    const [runs, sites, progress] = await Promise.all([ops.runs(monitor.id), page.ops.listSites(), runsInProgress(deps, page.signedIn.account.id)]);
    const wanted = page.ctx.query.run;
    const run = typeof wanted === 'string' ? runs.find((candidate) => candidate.id === wanted) : runs[0];
    if (typeof wanted === 'string' && !run) throw new NotFound(`Run ${wanted} not found`);
    const sizes = await pictureSizes(deps, run);
    const state = progress.get(monitor.id);
    page.send(
      `Monitor ${monitor.name}`,
      html`<p><a href="/dashboard/monitors">Back to monitors</a></p>
      ${notice(page.ctx.query)}
      ${state && html`<p class="notice progress" role="status" data-reload-seconds="${RELOAD_SECONDS}">A run is ${state === 'queued' ? 'queued' : 'running'}. This page reloads every ${RELOAD_SECONDS} seconds until it has finished. <a href="/dashboard/monitors/${monitor.id}">Reload now</a></p>`}
      <dl class="facts">
        <dt>Schedule</dt><dd><code>${monitor.schedule}</code> (${monitor.timeZone})</dd>
        <dt>Next run</dt><dd>${monitor.nextRunAt === null ? 'none: suspended' : timestamp(monitor.nextRunAt)}</dd>
        <dt>State</dt><dd>${monitor.suspend ? 'Suspended' : 'Active'}</dd>
        <dt>Access</dt><dd>${access(sites, monitor.siteId)}</dd>
        <dt>Threshold</dt><dd>${percent(monitor.compare.threshold)} of the pixels</dd>
        <dt>Compared with</dt><dd>${monitor.compare.baseline === 'accepted' ? 'the accepted baseline' : 'the previous run'}</dd>
        <dt>Owner</dt><dd>${owner(monitor)}</dd>
      </dl>
      ${actions(page, monitor)}
      <section aria-labelledby="pictures" data-run="${run?.id ?? ''}">
        <h2 id="pictures">${run ? html`Pages in the run of ${timestamp(run.finishedAt)}${run.id !== runs[0]?.id && ' (an earlier run)'}` : 'Pages'}</h2>
        ${!run && html`<p>No run yet. Run now takes the baselines.</p>`}
        ${monitor.pages.map((declared) => pageSection(page, monitor, runs, run, declared.name, sizes))}
      </section>
      <section aria-labelledby="runs">
        <h2 id="runs">Runs</h2>
        ${runsTable(monitor, runs, run)}
      </section>`,
    );
  };
}

export function monitorImage(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const png = await operations(deps, page).image(monitorId(page), String(page.ctx.params.imageId));
    page.ctx.set({ 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'private, max-age=31536000, immutable' });
    page.ctx.type = 'image/png';
    page.ctx.body = png;
  };
}

export function runMonitorNow(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const id = monitorId(page);
    await operations(deps, page).runNow(id);
    page.redirect(`/dashboard/monitors/${id}?notice=monitor-run-queued`);
  };
}

export function acceptBaseline(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const id = monitorId(page);
    const runId = field(page.ctx, 'runId');
    await operations(deps, page).acceptBaseline(id, { runId, page: field(page.ctx, 'page') });
    page.redirect(`/dashboard/monitors/${id}?run=${encodeURIComponent(runId)}&notice=monitor-baseline-accepted`);
  };
}

export function suspendMonitor(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const id = monitorId(page);
    const suspend = field(page.ctx, 'suspend');
    if (suspend !== 'true' && suspend !== 'false') throw new BadRequest('suspend must be true or false');
    await operations(deps, page).update(id, { suspend: suspend === 'true' });
    page.redirect(`/dashboard/monitors/${id}?notice=${suspend === 'true' ? 'monitor-suspended' : 'monitor-resumed'}`);
  };
}

export function confirmMonitorDeletion(deps: DashboardDeps): PageHandler {
  return async (page) => {
    const monitor = await operations(deps, page).get(monitorId(page));
    page.send(
      `Delete monitor ${monitor.name}?`,
      html`${monitor.managedBy
        ? managedNote(monitor.managedBy)
        : html`<p>The monitor, its runs and every picture go. This cannot be undone.</p>
          <form method="post" action="/dashboard/monitors/${monitor.id}/delete" class="actions">
            ${csrfField(page.csrfToken)}
            <button type="submit" class="danger">Delete monitor ${monitor.name}</button>
            <a href="/dashboard/monitors/${monitor.id}">Cancel</a>
          </form>`}`,
    );
  };
}

export function deleteMonitor(deps: DashboardDeps): PageHandler {
  return async (page) => {
    await operations(deps, page).remove(monitorId(page));
    page.redirect('/dashboard/monitors?notice=monitor-deleted');
  };
}
