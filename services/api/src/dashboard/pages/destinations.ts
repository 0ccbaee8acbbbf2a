import { validate as validateNewDestination } from '../../routes/api/destinations.create.ts';
import type { DestinationView } from '../../storage/destinations.ts';
import type { PageContext } from '../deps.ts';
import { checkboxField, csrfField, errorsFor, formError, textField, type FieldErrors } from '../fields.ts';
import { checkFormText, field } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { errorStatus, managedNote, notice, timestamp, userMessage } from './common.ts';

/**
 * Storage destinations (docs/storage.md): list, register, delete after a confirmation page. Input
 * goes through the management API's own validator and operations (the endpoint through the network
 * guard), so the rules and messages are the API's. The secret is a password field, never shown
 * again: not in the list, and not in the form when it comes back with an error.
 */
const DESTINATION_FIELDS = {
  name: /^name\b/,
  endpoint: /^(endpoint|storage endpoint)\b/,
  bucket: /^bucket\b/,
  region: /^region\b/,
  keyTemplate: /^keyTemplate\b/,
  accessKeyId: /^credentials\b/,
};
export const DESTINATION_FORM_FIELDS = ['name', 'endpoint', 'bucket', 'region', 'pathStyle', 'keyTemplate', 'accessKeyId', 'secretAccessKey'] as const;

type Values = Record<'name' | 'endpoint' | 'bucket' | 'region' | 'keyTemplate' | 'accessKeyId', string> & { pathStyle: boolean };
const EMPTY: Values = { name: '', endpoint: '', bucket: '', region: 'us-east-1', keyTemplate: 'shots/{date}/{id}.{format}', accessKeyId: '', pathStyle: false };

function destinationForm(page: PageContext, values: Values, errors: FieldErrors): SafeHtml {
  return html`<form method="post" action="/dashboard/destinations" novalidate>
    ${formError(errors)}
    ${csrfField(page.csrfToken)}
    ${textField({ label: 'Name', name: 'name', value: values.name, hint: 'Lower-case letters, digits and hyphens; captures name the destination by it.', errors })}
    ${textField({ label: 'Endpoint', name: 'endpoint', value: values.endpoint, type: 'url', hint: 'Where the S3 API answers, e.g. https://s3.eu-west-1.amazonaws.com. Private addresses are refused.', errors })}
    ${textField({ label: 'Bucket', name: 'bucket', value: values.bucket, errors })}
    ${textField({ label: 'Region', name: 'region', value: values.region, errors })}
    ${checkboxField({ label: 'Path-style URLs (endpoint/bucket/key)', name: 'pathStyle', checked: values.pathStyle, hint: 'Most self-hosted servers (MinIO, Ceph); leave off for AWS.', errors })}
    ${textField({ label: 'Key template', name: 'keyTemplate', value: values.keyTemplate, hint: '{id}, {date} and {format} are filled in per capture.', errors })}
    ${textField({ label: 'Access key id', name: 'accessKeyId', value: values.accessKeyId, autocomplete: 'off', errors })}
    ${textField({ label: 'Secret access key', name: 'secretAccessKey', type: 'password', autocomplete: 'new-password', hint: 'Stored sealed; never shown again.', errors })}
    <button type="submit" class="primary">Register destination</button>
  </form>`;
}

function destinationRow(destination: DestinationView): SafeHtml {
  return html`<tr>
    <th scope="row" data-label="Name">${destination.name}</th>
    <td data-label="Bucket"><code>${destination.bucket}</code> at ${destination.endpoint}</td>
    <td data-label="Key template"><code>${destination.keyTemplate}</code></td>
    <td data-label="Created">${timestamp(destination.createdAt)}</td>
    <td data-label="Actions">${destination.managedBy
      ? managedNote(destination.managedBy)
      : html`<a href="/dashboard/destinations/${destination.name}/delete">Delete<span class="visually-hidden"> ${destination.name}</span></a>`}</td>
  </tr>`;
}

async function listPage(page: PageContext, values: Values = EMPTY, errors: FieldErrors = {}, status = 200): Promise<void> {
  const destinations = await page.destinations.list();
  page.send(
    'Storage destinations',
    html`${notice(page.ctx.query)}
    <section aria-labelledby="destinations-list">
      <h2 id="destinations-list">Your storage destinations</h2>
      ${destinations.length === 0
        ? html`<p>No destinations yet. A destination is a bucket captures can be written to, with <code>"storage": {"destination": "name"}</code>.</p>`
        : html`<div class="table-wrap"><table class="stack">
            <thead><tr><th scope="col">Name</th><th scope="col">Bucket</th><th scope="col">Key template</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
            <tbody>${destinations.map(destinationRow)}</tbody>
          </table></div>`}
    </section>
    <section class="card" aria-labelledby="new-destination">
      <h2 id="new-destination">Register a destination</h2>
      ${destinationForm(page, values, errors)}
    </section>`,
    status,
  );
}

export async function showDestinations(page: PageContext): Promise<void> {
  await listPage(page);
}

export async function createDestination(page: PageContext): Promise<void> {
  const values: Values = {
    name: field(page.ctx, 'name').trim(),
    endpoint: field(page.ctx, 'endpoint').trim(),
    bucket: field(page.ctx, 'bucket').trim(),
    region: field(page.ctx, 'region').trim(),
    keyTemplate: field(page.ctx, 'keyTemplate').trim(),
    accessKeyId: field(page.ctx, 'accessKeyId').trim(),
    pathStyle: field(page.ctx, 'pathStyle') === 'on',
  };
  try {
    checkFormText(page.ctx);
    const input = validateNewDestination({
      name: values.name,
      endpoint: values.endpoint,
      bucket: values.bucket,
      ...(values.region ? { region: values.region } : {}),
      pathStyle: values.pathStyle,
      ...(values.keyTemplate ? { keyTemplate: values.keyTemplate } : {}),
      credentials: { accessKeyId: values.accessKeyId, secretAccessKey: field(page.ctx, 'secretAccessKey') },
    });
    await page.destinations.create(input);
  } catch (err) {
    await listPage(page, values, errorsFor(userMessage(err), DESTINATION_FIELDS), errorStatus(err));
    return;
  }
  page.redirect('/dashboard/destinations?notice=destination-created');
}

function destinationName(page: PageContext): string {
  return String(page.ctx.params.name);
}

export async function confirmDestinationDeletion(page: PageContext): Promise<void> {
  const destination = await page.destinations.get(destinationName(page));
  page.send(
    `Delete destination ${destination.name}?`,
    html`<p>Captures can no longer be written to it; asynchronous captures still waiting for it fail. The objects already in the bucket stay there.</p>
    <form method="post" action="/dashboard/destinations/${destination.name}/delete" class="actions">
      ${csrfField(page.csrfToken)}
      <button type="submit" class="danger">Delete destination ${destination.name}</button>
      <a href="/dashboard/destinations">Cancel</a>
    </form>`,
  );
}

export async function deleteDestination(page: PageContext): Promise<void> {
  await page.destinations.delete(destinationName(page));
  page.redirect('/dashboard/destinations?notice=destination-deleted');
}
