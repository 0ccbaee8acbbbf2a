import type { Counted, TimelineEntry } from '../../../renderer/src/report/page-report.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * A page's requests as a waterfall: one row per request, a bar from its start for its duration on
 * one time axis shared by all rows, labelled with its type and URL. Server-rendered SVG like
 * chart.ts (no script, no library, nothing the strict CSP refuses: positions are SVG attributes,
 * never inline styles). The SVG is a picture with a title and a summary in words; the table after
 * it (folded, as it can be long) holds every figure, for screen readers and for exact values. URLs are the page's to choose:
 * like every value here they go through `html`, which escapes them.
 */
const WIDTH = 960;
const LABEL_WIDTH = 330;
const ROW = 18;
const AXIS = 26;
const RIGHT = 12;
/** Characters of a URL shown in a row's label; its <title> and the table have it whole. */
const LABEL_CHARS = 48;
/** Colour classes in the stylesheet; other types share one. */
const TYPE_CLASSES = new Set(['document', 'stylesheet', 'script', 'image', 'font', 'fetch', 'xhr']);

/** Where a request's bar ends: its end, or for one that had not ended, the end of the visit as far as the timeline saw it. */
function endOf(entry: TimelineEntry, visitEnd: number): number {
  return entry.durationMs === null ? visitEnd : entry.startMs + entry.durationMs;
}

/** A time axis' step: 1, 2 or 5 times a power of ten, giving at most about 8 ticks. */
function tickStep(span: number): number {
  const rough = span / 8;
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= rough) ?? 10 * power;
}

/** The end of a URL, where what tells requests apart usually is (the path's last parts, the query). */
function shortUrl(url: string): string {
  const withoutScheme = url.replace(/^https?:\/\//, '');
  return withoutScheme.length <= LABEL_CHARS ? withoutScheme : `…${withoutScheme.slice(-(LABEL_CHARS - 1))}`;
}

const ms = (value: number) => `${Math.round(value)} ms`;

function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

function statusText(entry: TimelineEntry): string {
  if (entry.status !== null) return String(entry.status);
  return entry.failed ? 'failed' : 'none';
}

/** `id` prefixes the SVG's title and description ids; `name` is the page's name, said in the title. */
export function waterfall(id: string, name: string, timeline: Counted<TimelineEntry>): SafeHtml {
  const entries = timeline.items;
  if (entries.length === 0) return html`<p class="muted">No request was recorded.</p>`;
  const lastEnd = Math.max(...entries.map((entry) => (entry.durationMs === null ? entry.startMs : entry.startMs + entry.durationMs)));
  const span = Math.max(1, lastEnd);
  const step = tickStep(span);
  const axisEnd = Math.ceil(span / step) * step;
  const plot = WIDTH - LABEL_WIDTH - RIGHT;
  // Clamped: a bar never leaves the plot, whatever times a report holds.
  const x = (time: number) => LABEL_WIDTH + (Math.min(Math.max(time, 0), axisEnd) / axisEnd) * plot;
  const height = AXIS + entries.length * ROW + 4;
  const ticks = Array.from({ length: Math.round(axisEnd / step) + 1 }, (_, i) => i * step);
  const bounded = timeline.total > entries.length ? ` (the first ${entries.length} of ${timeline.total} kept)` : '';
  const title = `Requests of page ${name} by start and duration, in ms from the start of navigation${bounded}`;
  const failed = entries.filter((entry) => entry.failed).length;
  const description = `${entries.length} request${entries.length === 1 ? '' : 's'}, the last ending at ${ms(lastEnd)}${failed > 0 ? `, ${failed} failed` : ''}. The table below lists each one.`;
  const rows = entries.map((entry, i) => {
    const y = AXIS + i * ROW;
    const start = x(entry.startMs);
    const width = Math.max(2, x(endOf(entry, lastEnd)) - start);
    const kind = TYPE_CLASSES.has(entry.type) ? entry.type : 'other';
    const classes = `bar bar-${kind}${entry.failed ? ' bar-failed' : ''}${entry.durationMs === null ? ' bar-open' : ''}`;
    const duration = entry.durationMs === null ? 'not ended' : ms(entry.durationMs);
    return html`<g class="request">
      <title>${entry.type} ${entry.url}: from ${ms(entry.startMs)}, ${duration}, status ${statusText(entry)}</title>
      <text class="label" x="${LABEL_WIDTH - 8}" y="${y + ROW - 5}" text-anchor="end">${entry.type} ${shortUrl(entry.url)}</text>
      <rect class="${classes}" x="${start.toFixed(1)}" y="${y + 3}" width="${width.toFixed(1)}" height="${ROW - 6}"></rect>
    </g>`;
  });
  return html`<figure class="waterfall">
    <svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc">
      <title id="${id}-title">${title}</title>
      <desc id="${id}-desc">${description}</desc>
      ${ticks.map(
        (tick, i) => html`<line class="grid" x1="${x(tick).toFixed(1)}" y1="${AXIS - 6}" x2="${x(tick).toFixed(1)}" y2="${height}"></line>
        <text x="${x(tick).toFixed(1)}" y="${AXIS - 10}" text-anchor="${i === ticks.length - 1 ? 'end' : 'middle'}">${ms(tick)}</text>`,
      )}
      ${rows}
    </svg>
    <figcaption>${title}</figcaption>
  </figure>
  <details class="requests"><summary>The ${entries.length} request${entries.length === 1 ? '' : 's'} as a table</summary>
  <div class="table-wrap"><table class="stack">
    <caption>Requests of page ${name}${bounded}</caption>
    <thead><tr><th scope="col">Type</th><th scope="col">URL</th><th scope="col">Start</th><th scope="col">Duration</th><th scope="col">Status</th><th scope="col">Transferred</th></tr></thead>
    <tbody>${entries.map(
      (entry) => html`<tr${entry.failed && html` class="failed"`}>
        <td data-label="Type">${entry.type}</td>
        <td data-label="URL" class="url">${entry.url}</td>
        <td data-label="Start">${ms(entry.startMs)}</td>
        <td data-label="Duration">${entry.durationMs === null ? 'not ended' : ms(entry.durationMs)}</td>
        <td data-label="Status">${statusText(entry)}</td>
        <td data-label="Transferred">${bytes(entry.bytes)}</td>
      </tr>`,
    )}</tbody>
  </table></div></details>`;
}
