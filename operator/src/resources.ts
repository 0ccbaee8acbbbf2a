/**
 * The custom resources the operator reconciles (crds/site.yaml, crds/apikey.yaml) and the names
 * it writes under. Shapes mirror the CRDs' openAPIV3Schema.
 */
export const GROUP = 'viewfinder.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/** Added while a resource lives, so that its store object is cleaned up before it goes. */
export const FINALIZER = 'viewfinder.dev/cleanup';
/** The component name in Events, the Lease holder prefix and the managed-by label. */
export const OPERATOR_NAME = 'viewfinder-operator';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const API_KEY_LABEL = 'viewfinder.dev/apikey';
/** On the Secret: the rotation of the ApiKey its data was issued for. */
export const ROTATION_ANNOTATION = 'viewfinder.dev/rotation';
/** The Secret's data key that holds the plaintext API key. */
export const SECRET_KEY_FIELD = 'apiKey';
/** The Secret's data key that holds the key's signing secret (HMAC: signed render links, webhooks). */
export const SIGNING_SECRET_FIELD = 'signingSecret';

export type Kind = 'Site' | 'ApiKey' | 'PageMonitor';
export const PLURALS: Record<Kind, string> = { Site: 'sites', ApiKey: 'apikeys', PageMonitor: 'pagemonitors' };

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion: string;
  generation: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface SiteResource {
  apiVersion: string;
  kind: 'Site';
  metadata: ObjectMeta;
  spec: { account: string; allowedDomains?: string[]; storage?: SiteStorageSpec };
  status?: {
    siteId?: string;
    /** The destination spec.storage is, and the Secret version (uid/resourceVersion) its keys were last sent from. */
    storage?: { destination: string; credentialsVersion: string };
    observedGeneration?: number;
    conditions?: Condition[];
  };
}

/** A Site's storage destination (crds/site.yaml spec.storage); its keys are in a Secret of the namespace. */
export interface SiteStorageSpec {
  name: string;
  endpoint: string;
  bucket: string;
  region?: string;
  pathStyle?: boolean;
  keyTemplate?: string;
  credentialsSecretRef: { name: string };
}

export interface ApiKeyResource {
  apiVersion: string;
  kind: 'ApiKey';
  metadata: ObjectMeta;
  spec: { account: string; siteRef?: string; restrictDomains?: boolean; secretName?: string; rotation?: number };
  status?: {
    keyId?: string;
    prefix?: string;
    secretName?: string;
    lastRotatedAt?: string;
    observedGeneration?: number;
    conditions?: Condition[];
  };
}

export interface MonitorRegionSpec {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** crds/pagemonitor.yaml. */
export interface PageMonitorResource {
  apiVersion: string;
  kind: 'PageMonitor';
  metadata: ObjectMeta;
  spec: {
    siteRef?: string;
    account?: string;
    schedule: string;
    timeZone?: string;
    suspend?: boolean;
    historyLimit?: number;
    compare?: { threshold?: number; baseline?: 'accepted' | 'previous'; pixelTolerance?: number };
    pages: Array<{ name: string; url: string; ignoreRegions?: MonitorRegionSpec[]; [option: string]: unknown }>;
  };
  status?: {
    monitorId?: string;
    observedGeneration?: number;
    /** The run the status shows: its events are recorded once, even across restarts and leaders. */
    lastRunId?: string;
    lastRunTime?: string;
    nextRunTime?: string;
    largestDiffRatio?: number;
    pages?: Array<{
      name: string;
      diffRatio?: number;
      changed?: boolean;
      lastRunTime?: string;
      lastCaptureId?: string;
      baselineCaptureId?: string;
      lastError?: string;
      regions?: MonitorRegionSpec[];
      /** The checks the page failed in the last run that judged it; measured and bound as text. */
      failingChecks?: Array<{ check: string; measured?: string; bound?: string; message: string }>;
    }>;
    conditions?: Condition[];
  };
}

export type Resource = SiteResource | ApiKeyResource | PageMonitorResource;

/** A work-queue key: namespace/name, the only thing a reconcile request carries. */
export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
