import type { IssuedKeyView, KeyView, SiteView } from '../../../../../lib/management.ts';
import { validate as validateNewKey } from '../../routes/api/keys.create.ts';
import type { PageContext } from '../deps.ts';
import { checkboxField, csrfField, errorsFor, formError, selectField, textField, type FieldErrors } from '../fields.ts';
import { field } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { errorStatus, keyKind, managedNote, notice, siteName, timestamp, userMessage } from './common.ts';

/**
 * API keys: create (full access, or for one site, restricted or not), regenerate and delete after
 * a confirmation page. A new key is shown once: the answer to the POST renders it directly
 * (no-store) instead of redirecting, because the plaintext must not be kept anywhere, not even
 * for the one request a redirect would need.
 */
const KEY_FIELDS = { name: /^name\b/, siteId: /^(siteId\b|Site .* not found|A site key)/, restrictDomains: /^restrictDomains\b/ };
const FULL_ACCESS = '';

interface KeyFormValues {
  name: string;
  siteId: string;
  restrictDomains: boolean;
}

function keyRow(key: KeyView, sites: SiteView[]): SafeHtml {
  return html`<tr>
    <th scope="row" data-label="Name">${key.name}</th>
    <td data-label="Kind">${keyKind(key)}</td>
    <td data-label="Site">${siteName(sites, key.siteId)}</td>
    <td data-label="Prefix"><code>${key.prefix}…</code></td>
    <td data-label="Created">${timestamp(key.createdAt)}</td>
    <td data-label="Last used">${timestamp(key.lastUsedAt)}</td>
    <td data-label="Actions">${key.managedBy ? managedNote(key.managedBy) : html`<a href="/dashboard/keys/${key.id}/regenerate">Regenerate<span class="visually-hidden"> ${key.name}</span></a>
      <a href="/dashboard/keys/${key.id}/delete">Delete<span class="visually-hidden"> ${key.name}</span></a>`}</td>
  </tr>`;
}

async function listPage(page: PageContext, values: KeyFormValues = { name: '', siteId: FULL_ACCESS, restrictDomains: false }, errors: FieldErrors = {}, status = 200) {
  const [keys, sites] = await Promise.all([page.ops.listKeys(), page.ops.listSites()]);
  page.send(
    'API keys',
    html`${notice(page.ctx.query)}
    <section aria-labelledby="keys-list">
      <h2 id="keys-list">Your keys</h2>
      ${keys.length === 0
        ? html`<p>No keys yet.</p>`
        : html`<div class="table-wrap"><table class="stack">
            <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Site</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
            <tbody>${keys.map((key) => keyRow(key, sites))}</tbody>
          </table></div>`}
    </section>
    <section class="card" aria-labelledby="new-key">
      <h2 id="new-key">Create a key</h2>
      <form method="post" action="/dashboard/keys" novalidate>
        ${formError(errors)}
        ${csrfField(page.csrfToken)}
        ${textField({ label: 'Name', name: 'name', value: values.name, required: true, hint: 'Shown in this list, e.g. "production" or "CI".', errors })}
        ${selectField({
          label: 'Access',
          name: 'siteId',
          value: values.siteId,
          errors,
          choices: [{ value: FULL_ACCESS, label: 'Full access: every site (requests name site_id)' }, ...sites.map((site) => ({ value: site.id, label: `Site: ${site.name}` }))],
        })}
        ${checkboxField({ label: "Restrict to the site's allowed domains", name: 'restrictDomains', checked: values.restrictDomains, hint: 'Site keys only: the key captures only URLs on the site\'s domains and their subdomains.', errors })}
        <button type="submit" class="primary">Create key</button>
      </form>
    </section>`,
    status,
  );
}

/** The one time a key's plaintext and its signing secret are on a page: read-only fields with copy buttons. */
function issuedPage(page: PageContext, title: string, issued: IssuedKeyView): void {
  page.send(
    title,
    html`<div class="card issued">
      <p class="warning" role="alert">Copy this key and its signing secret now. They are shown only once and cannot be retrieved again. Keep them in an environment variable or a secret store, never in front-end code.</p>
      <div class="field">
        <label for="issued-key">API key "${issued.name}"</label>
        <div class="copy-row">
          <input id="issued-key" type="text" readonly value="${issued.key}" spellcheck="false" autocomplete="off">
          <button type="button" data-copy="issued-key" aria-describedby="copy-status">Copy<span class="visually-hidden"> API key</span></button>
        </div>
      </div>
      <div class="field">
        <label for="issued-signing-secret">Signing secret</label>
        <div class="copy-row">
          <input id="issued-signing-secret" type="text" readonly value="${issued.signingSecret}" spellcheck="false" autocomplete="off">
          <button type="button" data-copy="issued-signing-secret" aria-describedby="copy-status">Copy<span class="visually-hidden"> signing secret</span></button>
        </div>
      </div>
      <p class="hint" id="copy-status" role="status" aria-live="polite"></p>
      <p>Send the key in the <code>X-API-Key</code> header of <code>POST /api/screenshot</code>. The signing secret signs render links for <code>&lt;img src&gt;</code> (key id <code>${issued.id}</code>).</p>
      <p><a href="/dashboard/keys">Done: back to API keys</a></p>
    </div>`,
    200,
  );
}

export async function showKeys(page: PageContext): Promise<void> {
  await listPage(page);
}

export async function createKey(page: PageContext): Promise<void> {
  const values = { name: field(page.ctx, 'name').trim(), siteId: field(page.ctx, 'siteId'), restrictDomains: field(page.ctx, 'restrictDomains') === 'on' };
  let issued: IssuedKeyView;
  try {
    const input = validateNewKey({
      name: values.name,
      ...(values.siteId !== FULL_ACCESS ? { siteId: values.siteId } : {}),
      ...(values.restrictDomains ? { restrictDomains: true } : {}),
    });
    issued = await page.ops.createKey(input);
  } catch (err) {
    await listPage(page, values, errorsFor(userMessage(err), KEY_FIELDS), errorStatus(err));
    return;
  }
  issuedPage(page, 'Your new API key', issued);
}

function keyId(page: PageContext): string {
  return String(page.ctx.params.keyId);
}

function confirmPage(page: PageContext, key: KeyView, action: 'regenerate' | 'delete'): void {
  const regenerate = action === 'regenerate';
  page.send(
    `${regenerate ? 'Regenerate' : 'Delete'} key ${key.name}?`,
    html`<p>${regenerate
      ? 'A new key replaces this one: the current key stops working at once, and the new one is shown once.'
      : 'The key stops working at once. This cannot be undone.'}</p>
    <form method="post" action="/dashboard/keys/${key.id}/${action}" class="actions">
      ${csrfField(page.csrfToken)}
      <button type="submit" class="danger">${regenerate ? 'Regenerate' : 'Delete'} key ${key.name}</button>
      <a href="/dashboard/keys">Cancel</a>
    </form>`,
  );
}

export async function confirmKeyRegeneration(page: PageContext): Promise<void> {
  confirmPage(page, await page.ops.getKey(keyId(page)), 'regenerate');
}

export async function regenerateKey(page: PageContext): Promise<void> {
  issuedPage(page, 'Your regenerated API key', await page.ops.regenerateKey(keyId(page)));
}

export async function confirmKeyDeletion(page: PageContext): Promise<void> {
  confirmPage(page, await page.ops.getKey(keyId(page)), 'delete');
}

export async function deleteKey(page: PageContext): Promise<void> {
  await page.ops.deleteKey(keyId(page));
  page.redirect('/dashboard/keys?notice=key-deleted');
}
