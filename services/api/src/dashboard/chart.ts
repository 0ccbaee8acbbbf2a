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
