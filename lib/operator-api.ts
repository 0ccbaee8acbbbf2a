/**
 * The contract between the hosted API and the operator (issue 20): the operator-facing routes
 * under /api/operator, which look objects up by the Kubernetes resource that owns them. The API
 * serves them (services/api/src/routes/api/operator/), the operator calls them
 * (operator/src/api/client.ts); both speak these shapes, and neither side imports the other.
 */

import type { DestinationCredentials, DestinationFields } from './store/destinations.ts';

/** The audience the operator's ServiceAccount token is issued for and the API reviews it with. */
export const DEFAULT_OPERATOR_AUDIENCE = 'viewfinder-api';

export type ManagedKind = 'Site' | 'ApiKey' | 'PageMonitor';

/** The owning resource: identity is kind/namespace/name; uid changes when it is created again. */
export interface ManagedByWire {
  kind: ManagedKind;
  namespace: string;
  name: string;
  uid: string;
}

export interface ManagedSite {
  id: string;
  accountId: string;
  name: string;
  allowedDomains: string[];
  managedBy: ManagedByWire;
  createdAt: string;
  updatedAt: string;
}

export interface ManagedKey {
  id: string;
  accountId: string;
  name: string;
  kind: 'full' | 'site';
  siteId: string | null;
  restrictDomains: boolean;
  prefix: string;
  managedBy: ManagedByWire;
  createdAt: string;
  lastUsedAt: string | null;
}

/** PUT of a key: `key` and `signingSecret` hold the secrets only when this call created the key, else null. */
export interface PutManagedKeyAnswer extends ManagedKey {
  key: string | null;
  signingSecret: string | null;
}

/** Regenerate: the new plaintext and signing secret, once. */
export interface IssuedManagedKey extends ManagedKey {
  key: string;
  signingSecret: string;
}

export interface PutManagedSite {
  accountId: string;
  uid: string;
  name: string;
  allowedDomains: string[];
}

export interface PutManagedKey {
  accountId: string;
  uid: string;
  name: string;
  /** A site id (a key scoped to it), or null for a full-access key. */
  siteId: string | null;
  restrictDomains: boolean;
}

/** A managed monitor as the operator routes answer it (services/api/src/monitors/management.ts). */
export interface ManagedMonitor {
  id: string;
  accountId: string;
  name: string;
  schedule: string;
  compare: { threshold: number; baseline: 'accepted' | 'previous'; pixelTolerance: number };
  /** `checks` and `steps` as declared (their shape is the API's business: the operator only asks whether a page has any). */
  pages: Array<{ name: string; checks?: object; steps?: object[] }>;
  baselines: Record<string, string>;
  managedBy: ManagedByWire;
  nextRunAt: string | null;
  lastRun: {
    id: string;
    finishedAt: string;
    pages: Array<{
      page: string;
      outcome: 'unchanged' | 'changed' | 'baseline' | 'failed';
      diffRatio: number | null;
      regions: Array<{ left: number; top: number; width: number; height: number }>;
      captureImageId: string | null;
      baselineImageId: string | null;
      error: string | null;
      /** The page's checks judged against its report (issue #40); null without checks or when the capture failed. The report itself stays in the API. */
      verdict: {
        failing: boolean;
        failures: Array<{ check: string; measured: number | string | null; bound: number | string | number[]; message: string }>;
        passed: string[];
      } | null;
      /** The page's journey (issue #41): present when it has steps; a journey that stopped also fails the verdict, naming the step. */
      journey?: { steps: Array<{ action: string; status: string }>; failedStep?: number } | null;
    }>;
  } | null;
}

/** The PUT of a monitor: the PageMonitor's spec, with its account and site resolved. */
export interface PutManagedMonitor {
  accountId: string;
  uid: string;
  siteId?: string;
  schedule: string;
  timeZone?: string;
  suspend?: boolean;
  historyLimit?: number;
  compare?: { threshold?: number; baseline?: 'accepted' | 'previous'; pixelTolerance?: number };
  pages: Array<Record<string, unknown>>;
}

/**
 * The storage destination a Site's `spec.storage` is (issue #43), as the operator routes answer it:
 * never its credentials. Its owner is the Site (managedBy.kind 'Site').
 */
export interface ManagedDestination extends DestinationFields {
  accountId: string;
  hasCredentials: true;
  managedBy: ManagedByWire;
  createdAt: string;
  updatedAt: string;
}

/** The PUT of a Site's destination: every field, and the credentials read from the Site's Secret (write-only). */
export interface PutManagedDestination extends DestinationFields {
  accountId: string;
  uid: string;
  credentials: DestinationCredentials;
}

/** The path of a Site's storage destination: /api/operator/destinations/{namespace}/{site name}. */
export function managedDestinationPath(namespace: string, siteName: string): string {
  return `/api/operator/destinations/${encodeURIComponent(namespace)}/${encodeURIComponent(siteName)}`;
}

/** The path of a managed object: /api/operator/sites/{namespace}/{name}. */
export function managedPath(kind: ManagedKind, namespace: string, name: string): string {
  const collection = { Site: 'sites', ApiKey: 'keys', PageMonitor: 'monitors' }[kind];
  return `/api/operator/${collection}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}
