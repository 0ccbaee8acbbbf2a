import { html, type SafeHtml } from './html.ts';

/**
 * A stacked bar chart as server-rendered SVG: no script and no chart library, so it shows under
 * the strict CSP and before any JavaScript. Colours come from classes in the stylesheet. The
 * numbers are also in a table next to it, for screen readers and for reading exact values.
 */
export interface ChartSeries {
  label: string;
  className: string;
  values: number[];
}

const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 84;
const BOTTOM = 24;
const TOP = 8;

export function barChart(id: string, title: string, labels: string[], series: ChartSeries[], format: (value: number) => string = String): SafeHtml {
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const plotHeight = HEIGHT - BOTTOM - TOP;
  const slot = (WIDTH - LEFT) / Math.max(1, labels.length);
  const barWidth = Math.max(2, slot * 0.7);
  const bars = labels.map((label, i) => {
    let y = HEIGHT - BOTTOM;
    return series.map((s) => {
      const value = s.values[i] ?? 0;
      const height = (value / max) * plotHeight;
      y -= height;
      return value === 0
        ? html``
        : html`<rect class="${s.className}" x="${(LEFT + i * slot + (slot - barWidth) / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${height.toFixed(1)}"><title>${label}: ${format(value)} ${s.label.toLowerCase()}</title></rect>`;
    });
  });
  const ticks = labels
    .map((label, i) => ({ label, i }))
    .filter(({ i }) => i % Math.ceil(labels.length / 6) === 0)
    .map(({ label, i }) => html`<text x="${(LEFT + i * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle">${label.slice(5)}</text>`);
  return html`<figure>
    <svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title">
      <title id="${id}-title">${title}</title>
      <line class="axis" x1="${LEFT}" y1="${HEIGHT - BOTTOM}" x2="${WIDTH}" y2="${HEIGHT - BOTTOM}"></line>
      <line class="axis" x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${HEIGHT - BOTTOM}"></line>
      <text x="${LEFT - 6}" y="${TOP + 10}" text-anchor="end">${format(max)}</text>
      <text x="${LEFT - 6}" y="${HEIGHT - BOTTOM}" text-anchor="end">0</text>
      ${bars}
      ${ticks}
    </svg>
    <figcaption>${title}</figcaption>
    <ul class="legend">${series.map((s) => html`<li><span class="swatch ${s.className.replace('bar-', '')}"></span>${s.label}</li>`)}</ul>
  </figure>`;
}

/** A ratio (0..1) as a percentage with three significant figures: 0.000123 → "0.0123 %". */
export function percent(ratio: number): string {
  return `${Number((ratio * 100).toPrecision(3))} %`;
}

export interface LinePoint {
  label: string;
  /** Null: no value at that point (a gap in the line). */
  value: number | null;
}

/**
 * A line of ratios over time with a threshold drawn across it, as server-rendered SVG (same frame
 * as barChart). The SVG has a title and a description stating the figures in words; callers show
 * them in a table too.
 */
export function lineChart(id: string, title: string, description: string, points: LinePoint[], threshold: number): SafeHtml {
  const plotHeight = HEIGHT - BOTTOM - TOP;
  const max = Math.max(threshold * 1.5, ...points.map((point) => point.value ?? 0), 1e-6);
  const slot = (WIDTH - LEFT) / Math.max(1, points.length);
  const x = (i: number) => LEFT + i * slot + slot / 2;
  const y = (value: number) => HEIGHT - BOTTOM - (value / max) * plotHeight;
  const segments: string[][] = [[]];
  points.forEach((point, i) => {
    if (point.value === null) segments.push([]);
    else segments.at(-1)?.push(`${x(i).toFixed(1)},${y(point.value).toFixed(1)}`);
  });
  const lines = segments.filter((segment) => segment.length > 1).map((segment) => html`<polyline class="line" points="${segment.join(' ')}"></polyline>`);
  const dots = points.map((point, i) =>
    point.value === null
      ? html``
      : html`<circle class="${point.value > threshold ? 'dot over' : 'dot'}" cx="${x(i).toFixed(1)}" cy="${y(point.value).toFixed(1)}" r="4"><title>${point.label}: ${percent(point.value)}</title></circle>`,
  );
  const ticks = points
    .map((point, i) => ({ point, i }))
    .filter(({ i }) => i % Math.ceil(points.length / 6) === 0)
    .map(({ point, i }) => html`<text x="${x(i).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle">${point.label}</text>`);
  return html`<figure>
    <svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc">
      <title id="${id}-title">${title}</title>
      <desc id="${id}-desc">${description}</desc>
      <line class="axis" x1="${LEFT}" y1="${HEIGHT - BOTTOM}" x2="${WIDTH}" y2="${HEIGHT - BOTTOM}"></line>
      <line class="axis" x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${HEIGHT - BOTTOM}"></line>
      <text x="${LEFT - 6}" y="${TOP + 10}" text-anchor="end">${percent(max)}</text>
      <text x="${LEFT - 6}" y="${HEIGHT - BOTTOM}" text-anchor="end">0 %</text>
      <line class="threshold" x1="${LEFT}" y1="${y(threshold).toFixed(1)}" x2="${WIDTH}" y2="${y(threshold).toFixed(1)}"></line>
      <text class="threshold-label" x="${WIDTH - 4}" y="${(y(threshold) - 4).toFixed(1)}" text-anchor="end">threshold ${percent(threshold)}</text>
      ${lines}
      ${dots}
      ${ticks}
    </svg>
    <figcaption>${title}</figcaption>
  </figure>`;
}
