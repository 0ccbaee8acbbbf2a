import type { CaptureStatus, WebhookStatus } from '../../captures/service.ts';
import type { DashboardDeps, PageHandler } from '../deps.ts';
import { html, type SafeHtml } from '../html.ts';
import { timestamp } from './common.ts';

/**
 * Jobs: the account's most recent asynchronous captures (POST /api/captures) with their state,
 * attempts and, when they have one, their webhook's deliveries. Read-only; the status URL of each
 * is what an API client would poll.
 */
const RECENT = 50;

const when = (iso: string | null) => (iso === null ? html`<span class="muted">not yet</span>` : timestamp(iso));

function webhookCell(webhook: WebhookStatus | undefined): SafeHtml | string {
  if (!webhook) return 'none';
  const attempts = `${webhook.attempts} ${webhook.attempts === 1 ? 'attempt' : 'attempts'}`;
  return html`${webhook.status}, ${attempts}${webhook.lastError ? html`<br><span class="hint">Last error: ${webhook.lastError}</span>` : ''}${
    webhook.nextAttemptAt ? html`<br><span class="hint">Next attempt ${when(webhook.nextAttemptAt)}</span>` : ''
  }`;
}

function jobRow(job: CaptureStatus): SafeHtml {
  return html`<tr>
    <th scope="row" data-label="Job"><code>${job.id}</code></th>
    <td data-label="URL" class="url">${job.url}</td>
    <td data-label="State"><span class="state state-${job.status}">${job.status}</span>${job.lastError ? html`<br><span class="hint">${job.lastError}</span>` : ''}</td>
    <td data-label="Submitted">${when(job.createdAt)}</td>
    <td data-label="Finished">${when(job.finishedAt)}</td>
    <td data-label="Attempts">${job.attempts} of ${job.maxAttempts}</td>
    <td data-label="Webhook">${webhookCell(job.webhook)}</td>
  </tr>`;
}

export function showJobs(deps: DashboardDeps): PageHandler {
  return async (page) => {
    if (!deps.captures) {
      page.send('Jobs', html`<p>Asynchronous captures are turned off on this service (<code>ASYNC_CAPTURES=false</code>).</p>`);
      return;
    }
    const jobs = await deps.captures.recent(page.signedIn.account.id, RECENT);
    page.send(
      'Jobs',
      html`<p>Your account's ${RECENT} most recent asynchronous captures (<code>POST /api/captures</code>), newest first. Finished ones are removed after their retention (24 hours by default).</p>
      ${jobs.length === 0
        ? html`<p>No asynchronous captures yet.</p>`
        : html`<div class="table-wrap"><table class="stack">
            <caption>Recent asynchronous captures</caption>
            <thead><tr><th scope="col">Job</th><th scope="col">URL</th><th scope="col">State</th><th scope="col">Submitted</th><th scope="col">Finished</th><th scope="col">Attempts</th><th scope="col">Webhook</th></tr></thead>
            <tbody>${jobs.map(jobRow)}</tbody>
          </table></div>`}`,
    );
  };
}
