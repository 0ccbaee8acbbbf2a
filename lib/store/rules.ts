import { randomBytes } from 'node:crypto';
import { BadRequest, Conflict, NotFound } from '../errors.ts';
import type { ManagedBy, ManagedByRef, NewKey, Site, UsageEvent, UsageScope } from './store.ts';

/**
 * Rules both backends apply the same way, so that the conformance suite sees one behaviour.
 */

/** `site_3f9c…`: a type prefix makes a pasted id self-explaining; 96 random bits make it unguessable. */
export function newId(type: 'acct' | 'site' | 'key' | 'user' | 'job' | 'mon' | 'run' | 'img' | 'dest'): string {
  return `${type}_${randomBytes(12).toString('hex')}`;
}

export interface KeyPlacement {
  siteId: string | null;
  restrictDomains: boolean;
  unsignedLinks: boolean;
}

/** A site key needs a site of the same account; a full key has neither a site nor domain restrictions. */
export function placeKey(input: Pick<NewKey, 'accountId' | 'kind' | 'siteId' | 'restrictDomains' | 'unsignedLinks'>, site: Site | null): KeyPlacement {
  if (input.kind === 'full') {
    if (input.siteId) throw new BadRequest('A full-access key has no siteId: give siteId only for a site key');
    if (input.restrictDomains) throw new BadRequest('restrictDomains needs a site key: a full-access key is never restricted');
    // A full-access key in a URL would hand the management API to whoever reads the URL.
    if (input.unsignedLinks) throw new BadRequest('unsignedLinks needs a site key: a full-access key never goes into a URL');
    return { siteId: null, restrictDomains: false, unsignedLinks: false };
  }
  if (!input.siteId) throw new BadRequest('A site key needs a siteId');
  if (site === null || site.accountId !== input.accountId) throw new NotFound(`Site ${input.siteId} not found`);
  return { siteId: site.id, restrictDomains: input.restrictDomains ?? false, unsignedLinks: input.unsignedLinks ?? false };
}

export function sameManagedIdentity(a: ManagedByRef, b: ManagedByRef): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

/** The operator maps one resource to one account; moving it to another would orphan its keys. */
export function assertSameAccount(existingAccountId: string, wantedAccountId: string, managedBy: ManagedBy): void {
  if (existingAccountId !== wantedAccountId) {
    throw new Conflict(
      `${managedBy.kind} ${managedBy.namespace}/${managedBy.name} already belongs to account ${existingAccountId}, not ${wantedAccountId}`,
    );
  }
}

export function duplicateManagedBy(managedBy: ManagedByRef): Conflict {
  return new Conflict(`${managedBy.kind} ${managedBy.namespace}/${managedBy.name} already has an object in the store`);
}

export function duplicateEmail(email: string): Conflict {
  return new Conflict(`A user with the email ${email} already exists`);
}

export const USAGE_SCOPES: UsageScope[] = ['site', 'key', 'monitor'];

/** The usage rows one event adds to: its site's (if any) and its key's or monitor's. */
export function usageScopes(event: UsageEvent): Array<readonly [UsageScope, string]> {
  const scopes: Array<readonly [UsageScope, string]> = event.siteId === null ? [] : [['site', event.siteId]];
  scopes.push(event.monitorId === undefined ? ['key', event.keyId] : ['monitor', event.monitorId]);
  return scopes;
}
