import type { KeyView, SiteView } from '../../../../../lib/management.ts';
import type { UsageDayRow } from '../../../../../lib/store/usage-history.ts';
import { utcDay } from '../../../../../lib/store/usage-history.ts';
import { BadRequest } from '../../../../../lib/errors.ts';
import { barChart } from '../chart.ts';
import type { PageContext } from '../deps.ts';
import { selectField } from '../fields.ts';
import { html } from '../html.ts';

/**
 * Usage: captures, failures and image bytes per day over the last DAYS days, for the whole account,
 * one site or one key (chosen with a GET form, so the view is a link), plus the totals per site
 * and per key since the start.
 */
const DAYS = 30;
/** The key id that Try it captures are counted under: they use no API key. */
export const TRY_IT_KEY_ID = 'dashboard';

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

function lastDays(now: Date): string[] {
  return Array.from({ length: DAYS }, (_, i) => utcDay(new Date(now.getTime() - (DAYS - 1 - i) * 86_400_000)));
}

function keyLabel(keys: KeyView[], id: string): string {
  if (id === TRY_IT_KEY_ID) return 'Try it (dashboard)';
  return keys.find((key) => key.id === id)?.name ?? `${id} (deleted)`;
}

function siteLabel(sites: SiteView[], id: string): string {
  return sites.find((site) => site.id === id)?.name ?? `${id} (deleted)`;
}

export async function showUsage(page: PageContext): Promise<void> {
  const days = lastDays(new Date());
  const [sites, keys, totals, history] = await Promise.all([
    page.ops.listSites(),
    page.ops.listKeys(),
    page.ops.usage(),
    page.ops.usageHistory(days[0] as string),
  ]);
  const selected = typeof page.ctx.query.of === 'string' ? page.ctx.query.of : 'all';
  // The account's total is the sum over keys and monitors: exactly one of them makes every capture (a monitor may have no site).
  const [scope, id] = selected === 'all' ? ['site', undefined] : (selected.split(':') as [string, string]);
  // Another account's site or key does not exist here, as on every other page.
  if (id !== undefined) {
    if (scope === 'site') await page.ops.getSite(id);
    else if (scope === 'key') await page.ops.getKey(id);
    else throw new BadRequest('of must be all, site:<site id> or key:<key id>');
  }
  const rows = history.filter((row: UsageDayRow) => (id === undefined ? row.scope !== 'site' : row.scope === scope && row.id === id));
  const perDay = (field: 'captures' | 'failures' | 'bytes') => days.map((day) => rows.filter((row) => row.day === day).reduce((sum, row) => sum + row[field], 0));
  const captures = perDay('captures');
  const failures = perDay('failures');
  const bytes = perDay('bytes');
  const choices = [
    { value: 'all', label: 'The whole account' },
    ...sites.map((site) => ({ value: `site:${site.id}`, label: `Site: ${site.name}` })),
    ...keys.map((key) => ({ value: `key:${key.id}`, label: `Key: ${key.name}` })),
  ];
  const totalRows = (kind: 'sites' | 'keys') =>
    Object.entries(totals[kind]).map(
      ([rowId, counts]) => html`<tr><th scope="row">${kind === 'sites' ? siteLabel(sites, rowId) : keyLabel(keys, rowId)}</th>
        <td>${counts.captures}</td><td>${counts.failures}</td><td>${formatBytes(counts.bytes)}</td></tr>`,
    );
  const totalsTable = (kind: 'sites' | 'keys', caption: string) => html`<div class="table-wrap"><table>
      <caption>${caption}</caption>
      <thead><tr><th scope="col">${kind === 'sites' ? 'Site' : 'Key'}</th><th scope="col">Captures</th><th scope="col">Failures</th><th scope="col">Bytes</th></tr></thead>
      <tbody>${totalRows(kind).length > 0 ? totalRows(kind) : html`<tr><td colspan="4">No captures yet.</td></tr>`}</tbody>
    </table></div>`;

  page.send(
    'Usage',
    html`<form method="get" action="/dashboard/usage" class="actions">
      ${selectField({ label: 'Show usage of', name: 'of', value: selected, choices })}
      <button type="submit">Show</button>
    </form>
    ${barChart('captures-chart', `Captures and failures per day, last ${DAYS} days (UTC)`, days, [
      { label: 'Captures', className: 'bar-captures', values: captures },
      { label: 'Failures', className: 'bar-failures', values: failures },
    ])}
    ${barChart('bytes-chart', `Image bytes returned per day, last ${DAYS} days (UTC)`, days, [{ label: 'Bytes', className: 'bar-captures', values: bytes }], formatBytes)}
    <details>
      <summary>The numbers per day</summary>
      <div class="table-wrap"><table>
        <thead><tr><th scope="col">Day (UTC)</th><th scope="col">Captures</th><th scope="col">Failures</th><th scope="col">Bytes</th></tr></thead>
        <tbody>${days.map((day, i) => html`<tr><th scope="row">${day}</th><td>${captures[i]}</td><td>${failures[i]}</td><td>${formatBytes(bytes[i] ?? 0)}</td></tr>`)}</tbody>
      </table></div>
    </details>
    <h2>Since the start</h2>
    ${totalsTable('sites', 'Per site')}
    ${totalsTable('keys', 'Per key')}`,
  );
}
