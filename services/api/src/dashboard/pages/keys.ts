import type { IssuedKeyView, KeyView, SiteView } from '../../../../../lib/management.ts';
import { CAPTURE_FORMATS } from '../../../../renderer/src/capture/image-formats.ts';
import { validate as validateNewKey } from '../../routes/api/keys.create.ts';
import { optionsFromQuery } from '../../routes/api/render.get.ts';
import { validateBody as validateCapture } from '../../routes/api/screenshot.post.ts';
import type { PageContext } from '../deps.ts';
import { checkboxField, csrfField, errorsFor, formError, selectField, textField, type FieldErrors } from '../fields.ts';
import { checkFormText, field } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { BadRequest } from '../../../../../lib/errors.ts';
import { ISSUED_PATH, keepForOneView, takeOneView, type IssuedOnce } from '../issued-once.ts';
import { errorStatus, keyKind, managedNote, notice, siteName, timestamp, userMessage } from './common.ts';

/**
 * API keys: create (full access, or for one site, restricted or not), regenerate and delete after
 * a confirmation page, and build signed render links. A new or regenerated key is shown once,
 * after a redirect (issued-once.ts): reloading that page never creates or regenerates another.
 */
const KEY_FIELDS = {
  name: /^name\b/,
  siteId: /^(siteId\b|Site .* not found|A site key)/,
  restrictDomains: /^restrictDomains\b/,
  unsignedLinks: /^unsignedLinks\b/,
};
const FULL_ACCESS = '';
export const KEY_FORM_FIELDS = ['name', 'siteId', 'restrictDomains', 'unsignedLinks'] as const;

interface KeyFormValues {
  name: string;
  siteId: string;
  restrictDomains: boolean;
  unsignedLinks: boolean;
}

/** The link builder: the render link's options as the form names them. */
const LINK_FIELDS = { keyId: /^(keyId\b|API key)/, url: /URL|^url\b/, format: /^format\b/, fullPage: /^fullPage\b/, cacheTtl: /^cacheTtl\b/, expiresIn: /^expiresIn\b/ };
export const LINK_FORM_FIELDS = ['keyId', 'url', 'format', 'fullPage', 'cacheTtl', 'expiresIn'] as const;
const EXPIRIES = [
  { value: '', label: 'Never' },
  { value: '3600', label: 'In 1 hour' },
  { value: '86400', label: 'In 1 day' },
  { value: '604800', label: 'In 7 days' },
  { value: '2592000', label: 'In 30 days' },
];

interface LinkFormValues {
  keyId: string;
  url: string;
  format: string;
  fullPage: boolean;
  cacheTtl: string;
  expiresIn: string;
}

const LINK_DEFAULTS: LinkFormValues = { keyId: '', url: '', format: 'png', fullPage: false, cacheTtl: '86400', expiresIn: '' };

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

interface ListPageState {
  key?: { values: KeyFormValues; errors: FieldErrors };
  link?: { values: LinkFormValues; errors: FieldErrors; signed?: string };
  status?: number;
}

async function listPage(page: PageContext, state: ListPageState = {}) {
  const { values, errors } = state.key ?? { values: { name: '', siteId: FULL_ACCESS, restrictDomains: false, unsignedLinks: false }, errors: {} };
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
        ${checkboxField({ label: 'Allow unsigned render links', name: 'unsignedLinks', checked: values.unsignedLinks, hint: 'Site keys only, off by default: /api/render also accepts the key itself in the URL, where anyone who sees the page can copy it. Signed links need no such thing.', errors })}
        <button type="submit" class="primary">Create key</button>
      </form>
    </section>
    ${linkBuilder(page, keys, state.link)}`,
    state.status ?? 200,
  );
}

/** Signed render links for <img src>, made with a site key's signing secret, which never reaches the page. */
function linkBuilder(page: PageContext, keys: KeyView[], state: ListPageState['link']): SafeHtml {
  const siteKeys = keys.filter((key) => key.kind === 'site');
  const values = state?.values ?? LINK_DEFAULTS;
  const errors = state?.errors ?? {};
  return html`<section class="card" aria-labelledby="link-builder">
    <h2 id="link-builder">Build a render link</h2>
    <p>A render link is a screenshot as a plain URL for <code>&lt;img src&gt;</code>: it names a site key by its id and is signed with the key's signing secret, so it can be shared but not changed. The documentation's <code>docs/render-links.md</code> says more.</p>
    ${siteKeys.length === 0
      ? html`<p>Links are signed with a site key. Create a key for one of your sites first.</p>`
      : html`<form method="post" action="/dashboard/keys/link" novalidate>
        ${formError(errors)}
        ${csrfField(page.csrfToken)}
        ${selectField({ label: 'Key', name: 'keyId', value: values.keyId, errors, choices: siteKeys.map((key) => ({ value: key.id, label: `${key.name} (${key.id})` })) })}
        ${textField({ label: 'URL to capture', name: 'url', type: 'url', value: values.url, required: true, hint: 'An http or https address, e.g. https://example.com', errors })}
        ${selectField({ label: 'Format', name: 'format', value: values.format, errors, choices: CAPTURE_FORMATS.map((format) => ({ value: format, label: format.toUpperCase() })), hint: 'PDF links suit <a href>; an <img> shows the images only.' })}
        ${checkboxField({ label: 'Full page', name: 'fullPage', checked: values.fullPage, errors })}
        ${textField({ label: 'Cache time (seconds)', name: 'cacheTtl', type: 'number', value: values.cacheTtl, hint: 'How long the same link is answered from the cache, and how long browsers and CDNs may keep it. 0 renders every time.', errors })}
        ${selectField({ label: 'Expires', name: 'expiresIn', value: values.expiresIn, errors, choices: EXPIRIES, hint: 'After this, the link answers 403.' })}
        <button type="submit" class="primary">Sign link</button>
      </form>`}
    ${state?.signed === undefined
      ? ''
      : html`<div class="field">
        <label for="signed-link">Signed link</label>
        <div class="copy-row">
          <input id="signed-link" type="text" readonly value="${state.signed}" spellcheck="false" autocomplete="off">
          <button type="button" data-copy="signed-link" aria-describedby="copy-status">Copy<span class="visually-hidden"> signed link</span></button>
        </div>
        <p class="hint" id="copy-status" role="status" aria-live="polite"></p>
        <p class="hint">Use it as it is: <code>&lt;img src="…" alt="…"&gt;</code>. Each view counts as a capture of the key's site.</p>
      </div>`}
  </section>`;
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

/** Shows the key the previous POST made, once; or, on a reload, says that it was shown. */
export async function showIssuedKey(page: PageContext): Promise<void> {
  const once = takeOneView(page.ctx);
  if (!once) {
    page.send(
      'Key already shown',
      html`<p>A new key is shown only once, and this one was shown already. If you did not copy it, regenerate it: the old one then stops working.</p>
      <p><a href="/dashboard/keys">Back to API keys</a></p>`,
    );
    return;
  }
  issuedPage(page, once.kind === 'created' ? 'Your new API key' : 'Your regenerated API key', once.issued);
}

/** POST → 303 → the one-time view; without a session cookie to bind it to (single sign-on), the answer shows it directly. */
function showOnce(page: PageContext, once: IssuedOnce): void {
  if (keepForOneView(page.ctx, once)) page.redirect(ISSUED_PATH);
  else issuedPage(page, once.kind === 'created' ? 'Your new API key' : 'Your regenerated API key', once.issued);
}

export async function createKey(page: PageContext): Promise<void> {
  const values = {
    name: field(page.ctx, 'name').trim(),
    siteId: field(page.ctx, 'siteId'),
    restrictDomains: field(page.ctx, 'restrictDomains') === 'on',
    unsignedLinks: field(page.ctx, 'unsignedLinks') === 'on',
  };
  let issued: IssuedKeyView;
  try {
    checkFormText(page.ctx);
    const input = validateNewKey({
      name: values.name,
      ...(values.siteId !== FULL_ACCESS ? { siteId: values.siteId } : {}),
      ...(values.restrictDomains ? { restrictDomains: true } : {}),
      ...(values.unsignedLinks ? { unsignedLinks: true } : {}),
    });
    issued = await page.ops.createKey(input);
  } catch (err) {
    await listPage(page, { key: { values, errors: errorsFor(userMessage(err), KEY_FIELDS) }, status: errorStatus(err) });
    return;
  }
  showOnce(page, { kind: 'created', issued });
}

export async function signLink(page: PageContext): Promise<void> {
  const values: LinkFormValues = {
    keyId: field(page.ctx, 'keyId'),
    url: field(page.ctx, 'url').trim(),
    format: field(page.ctx, 'format') || 'png',
    fullPage: field(page.ctx, 'fullPage') === 'on',
    cacheTtl: field(page.ctx, 'cacheTtl').trim(),
    expiresIn: field(page.ctx, 'expiresIn'),
  };
  let signed: string;
  try {
    checkFormText(page.ctx);
    const options: Array<[string, string]> = [['url', values.url]];
    if (values.format !== 'png') options.push(['format', values.format]);
    if (values.fullPage) options.push(['fullPage', 'true']);
    if (values.cacheTtl !== '' && values.cacheTtl !== '0') options.push(['cacheTtl', values.cacheTtl]);
    // The API's own reading and validation of a link's options: a link signed here is one it accepts.
    validateCapture(optionsFromQuery(new URLSearchParams(options)));
    if (!EXPIRIES.some((choice) => choice.value === values.expiresIn)) throw new BadRequest('expiresIn must be one of the choices');
    const expires = values.expiresIn === '' ? undefined : Math.floor(Date.now() / 1000) + Number(values.expiresIn);
    signed = await page.ops.signRenderLink(values.keyId, { origin: page.publicBaseUrl, options, expires });
  } catch (err) {
    await listPage(page, { link: { values, errors: errorsFor(userMessage(err), LINK_FIELDS) }, status: errorStatus(err) });
    return;
  }
  await listPage(page, { link: { values, errors: {}, signed } });
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
  showOnce(page, { kind: 'regenerated', issued: await page.ops.regenerateKey(keyId(page)) });
}

export async function confirmKeyDeletion(page: PageContext): Promise<void> {
  confirmPage(page, await page.ops.getKey(keyId(page)), 'delete');
}

export async function deleteKey(page: PageContext): Promise<void> {
  await page.ops.deleteKey(keyId(page));
  page.redirect('/dashboard/keys?notice=key-deleted');
}
