import { isHttpError } from '../../../../../lib/errors.ts';
import { kubectlEditCommand, type KeyView, type SiteView } from '../../../../../lib/management.ts';
import type { ManagedBy } from '../../../../../lib/store/store.ts';
import { html, type SafeHtml } from '../html.ts';

/** Pieces several pages share. */

export function timestamp(iso: string | null): SafeHtml {
  if (iso === null) return html`<span class="muted">never</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** Objects the operator owns are read-only here: say so, and give the command that changes them. */
export function managedNote(managedBy: ManagedBy): SafeHtml {
  return html`<p class="managed">Managed by Kubernetes (${managedBy.kind} ${managedBy.namespace}/${managedBy.name}). Change it with
    <code>${kubectlEditCommand(managedBy)}</code></p>`;
}

export function siteName(sites: SiteView[], siteId: string | null): string {
  if (siteId === null) return 'All sites';
  return sites.find((site) => site.id === siteId)?.name ?? siteId;
}

export function keyKind(key: KeyView): string {
  if (key.kind === 'full') return 'Full access';
  return key.restrictDomains ? 'Site, restricted to its domains' : 'Site';
}

/** A typed error's message, meant for the user (lib/errors.ts); anything else is a real failure, rethrown. */
export function userMessage(err: unknown): string {
  if (isHttpError(err)) return err.message;
  throw err;
}

/** The status a page re-rendered with an error answers with: the typed error's own. */
export function errorStatus(err: unknown): number {
  return isHttpError(err) ? err.status : 500;
}

/** The notices a redirect may carry (?notice=…): fixed texts, so the query cannot inject any. */
const NOTICES: Record<string, string> = {
  'site-created': 'The site was created.',
  'site-updated': 'The site was saved. Keys apply its domains from their next request.',
  'site-deleted': 'The site and its keys were deleted.',
  'key-deleted': 'The key was deleted. It stopped working at once.',
  'destination-created': 'The destination was registered. Its secret is stored sealed and is never shown again.',
  'destination-deleted': 'The destination was deleted. The objects in its bucket stay there.',
  'monitor-created': 'The monitor was created. Its first run takes the baselines: Run now takes them at once.',
  'monitor-updated': 'The monitor was saved. A run queued before the change is skipped; the next runs use the new settings.',
  'monitor-deleted': 'The monitor, its runs and its pictures were deleted.',
  'monitor-run-queued': 'A run was queued. Its pictures show here once it has finished.',
  'monitor-baseline-accepted': "The capture was accepted as the page's baseline: the next runs compare with it.",
  'monitor-suspended': 'The monitor was suspended: no scheduled run starts until you resume it. Run now still works.',
  'monitor-resumed': 'The monitor was resumed: it runs on its schedule again.',
};

export function notice(query: Record<string, unknown>): SafeHtml {
  const text = typeof query.notice === 'string' ? NOTICES[query.notice] : undefined;
  return html`${text && html`<p class="notice" role="status">${text}</p>`}`;
}
