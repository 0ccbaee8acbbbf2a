import type { SiteView } from '../../../../../lib/management.ts';
import { validate as validateNewSite } from '../../routes/api/sites.create.ts';
import { validate as validateSiteChange } from '../../routes/api/sites.update.ts';
import type { PageContext } from '../deps.ts';
import { csrfField, errorsFor, formError, textField, type FieldErrors } from '../fields.ts';
import { checkFormText, field } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { errorStatus, managedNote, notice, timestamp, userMessage } from './common.ts';

/**
 * Sites: list, create, edit the allowed domains, delete after a confirmation page. Input goes
 * through the management API's own validators and operations, so the rules and messages are
 * the API's; a message is shown next to the field it is about.
 */
const SITE_FIELDS = { allowedDomains: /^allowedDomains\b/, name: /^name\b/ };
export const SITE_FORM_FIELDS = ['name', 'allowedDomains'] as const;
const DOMAINS_HINT = 'One host name per line, or separated by commas, e.g. example.com. Subdomains are included. Leave empty to allow none.';

/** The textarea's text as the API's list: split on lines, commas and spaces. */
function domainList(text: string): string[] {
  return text.split(/[\s,]+/).filter((entry) => entry !== '');
}

function siteForm(page: PageContext, action: string, values: { name: string; domains: string }, errors: FieldErrors, submit: string): SafeHtml {
  return html`<form method="post" action="${action}" novalidate>
    ${formError(errors)}
    ${csrfField(page.csrfToken)}
    ${textField({ label: 'Name', name: 'name', value: values.name, hint: 'Optional: the first domain when empty.', errors })}
    ${textField({ label: 'Allowed domains', name: 'allowedDomains', value: values.domains, hint: DOMAINS_HINT, multiline: true, errors })}
    <button type="submit" class="primary">${submit}</button>
  </form>`;
}

function siteRow(site: SiteView): SafeHtml {
  return html`<tr>
    <th scope="row" data-label="Name">${site.name}</th>
    <td data-label="ID"><code>${site.id}</code></td>
    <td data-label="Allowed domains">${site.allowedDomains.length === 0 ? html`<span class="muted">none</span>` : site.allowedDomains.join(', ')}</td>
    <td data-label="Created">${timestamp(site.createdAt)}</td>
    <td data-label="Actions">${site.managedBy ? managedNote(site.managedBy) : html`<a href="/dashboard/sites/${site.id}">Edit<span class="visually-hidden"> ${site.name}</span></a>
      <a href="/dashboard/sites/${site.id}/delete">Delete<span class="visually-hidden"> ${site.name}</span></a>`}</td>
  </tr>`;
}

async function listPage(page: PageContext, values = { name: '', domains: '' }, errors: FieldErrors = {}, status = 200): Promise<void> {
  const sites = await page.ops.listSites();
  page.send(
    'Sites',
    html`${notice(page.ctx.query)}
    <section aria-labelledby="sites-list">
      <h2 id="sites-list">Your sites</h2>
      ${sites.length === 0
        ? html`<p>No sites yet. A site holds the domains its restricted keys may capture.</p>`
        : html`<div class="table-wrap"><table class="stack">
            <thead><tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">Allowed domains</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
            <tbody>${sites.map(siteRow)}</tbody>
          </table></div>`}
    </section>
    <section class="card" aria-labelledby="new-site">
      <h2 id="new-site">Create a site</h2>
      ${siteForm(page, '/dashboard/sites', values, errors, 'Create site')}
    </section>`,
    status,
  );
}

export async function showSites(page: PageContext): Promise<void> {
  await listPage(page);
}

export async function createSite(page: PageContext): Promise<void> {
  const values = { name: field(page.ctx, 'name').trim(), domains: field(page.ctx, 'allowedDomains') };
  try {
    checkFormText(page.ctx);
    const input = validateNewSite({ allowedDomains: domainList(values.domains), ...(values.name ? { name: values.name } : {}) });
    await page.ops.createSite(input);
  } catch (err) {
    await listPage(page, values, errorsFor(userMessage(err), SITE_FIELDS), errorStatus(err));
    return;
  }
  page.redirect('/dashboard/sites?notice=site-created');
}

function siteId(page: PageContext): string {
  return String(page.ctx.params.siteId);
}

function editPage(page: PageContext, site: SiteView, values: { name: string; domains: string }, errors: FieldErrors = {}, status = 200): void {
  page.send(
    `Site ${site.name}`,
    html`<p><a href="/dashboard/sites">Back to sites</a></p>
    ${site.managedBy
      ? html`${managedNote(site.managedBy)}<p>Allowed domains: ${site.allowedDomains.join(', ') || 'none'}</p>`
      : html`<section class="card" aria-labelledby="edit-site"><h2 id="edit-site">Edit</h2>
          ${siteForm(page, `/dashboard/sites/${site.id}`, values, errors, 'Save')}
        </section>`}`,
    status,
  );
}

export async function showSite(page: PageContext): Promise<void> {
  const site = await page.ops.getSite(siteId(page));
  editPage(page, site, { name: site.name, domains: site.allowedDomains.join('\n') });
}

export async function updateSite(page: PageContext): Promise<void> {
  const site = await page.ops.getSite(siteId(page));
  const values = { name: field(page.ctx, 'name').trim(), domains: field(page.ctx, 'allowedDomains') };
  try {
    checkFormText(page.ctx);
    const input = validateSiteChange({ allowedDomains: domainList(values.domains), ...(values.name ? { name: values.name } : {}) });
    await page.ops.updateSite(site.id, input);
  } catch (err) {
    editPage(page, site, values, errorsFor(userMessage(err), SITE_FIELDS), errorStatus(err));
    return;
  }
  page.redirect('/dashboard/sites?notice=site-updated');
}

export async function confirmSiteDeletion(page: PageContext): Promise<void> {
  const site = await page.ops.getSite(siteId(page));
  page.send(
    `Delete site ${site.name}?`,
    html`<p>Deleting the site also deletes every API key scoped to it; they stop working at once. This cannot be undone.</p>
    <form method="post" action="/dashboard/sites/${site.id}/delete" class="actions">
      ${csrfField(page.csrfToken)}
      <button type="submit" class="danger">Delete site ${site.name}</button>
      <a href="/dashboard/sites">Cancel</a>
    </form>`,
  );
}

export async function deleteSite(page: PageContext): Promise<void> {
  await page.ops.deleteSite(siteId(page));
  page.redirect('/dashboard/sites?notice=site-deleted');
}
