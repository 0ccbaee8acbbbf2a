import type { V1Secret } from '@kubernetes/client-node';
import type { ManagedDestination, PutManagedDestination } from '../../../lib/operator-api.ts';
import { normalDestinationEndpoint } from '../../../lib/store/destinations.ts';
import { REASONS } from '../conditions.ts';
import type { SiteResource } from '../resources.ts';
import { NotReady, apiCall, type ControllerDeps } from './common.ts';

type StorageStatus = NonNullable<NonNullable<SiteResource['status']>['storage']>;

/**
 * A Site's spec.storage (issue #43): the account's storage destination it declares, kept in the API
 * (owned by the Site, so the management API refuses to change or delete it), with the keys read
 * from the Secret spec.storage.credentialsSecretRef names. The keys are write-only in the API, so
 * which Secret version they came from is remembered in status.storage.credentialsVersion: a new
 * version of the Secret (seen on the Site's next reconcile: a change of the Site, or the periodic
 * resync) is sent again, which rotates them. Without spec.storage the destination is deleted.
 *
 * Answers the status.storage to write, or undefined when the Site declares none.
 */
export async function reconcileSiteStorage(deps: ControllerDeps, site: SiteResource): Promise<StorageStatus | undefined> {
  const { kube, api, logger } = deps;
  const { namespace, name } = site.metadata;
  const object = `${namespace}/${name}`;
  const spec = site.spec.storage;
  if (!spec) {
    // A read first: a Site without storage (the usual case) sends no DELETE at every resync.
    if (!(await apiCall(() => api.getDestination(namespace, name)))) return undefined;
    const deleted = await apiCall(() => api.deleteDestination(namespace, name));
    if (deleted) logger.info({ kind: 'Site', object, destination: deleted }, 'Deleted the storage destination: spec.storage is gone');
    return undefined;
  }
  const secretName = spec.credentialsSecretRef.name;
  const where = `spec.storage.credentialsSecretRef: Secret ${namespace}/${secretName}`;
  const secret = await kube.getSecret(namespace, secretName);
  if (!secret) throw new NotReady(REASONS.CredentialsNotFound, `${where} does not exist`);
  const credentials = storageCredentialsOf(secret, where);
  const credentialsVersion = `${secret.metadata?.uid ?? ''}/${secret.metadata?.resourceVersion ?? ''}`;
  const wanted: PutManagedDestination = {
    accountId: site.spec.account,
    uid: site.metadata.uid,
    name: spec.name,
    endpoint: normalDestinationEndpoint(spec.endpoint),
    bucket: spec.bucket,
    region: spec.region ?? 'us-east-1',
    pathStyle: spec.pathStyle ?? false,
    keyTemplate: spec.keyTemplate ?? '{id}.{format}',
    credentials,
  };
  const existing = await apiCall(() => api.getDestination(namespace, name));
  if (existing && destinationMatches(existing, wanted) && site.status?.storage?.credentialsVersion === credentialsVersion) {
    return { destination: existing.name, credentialsVersion };
  }
  let stored: ManagedDestination;
  try {
    stored = await apiCall(() => api.putDestination(namespace, name, wanted));
  } catch (err) {
    // apiCall reads a 409 as the account's; for a destination it is also its name, taken in the account.
    if (err instanceof NotReady && err.reason === REASONS.AccountMismatch && /already exists/.test(err.message)) {
      throw new NotReady(REASONS.DestinationConflict, `spec.storage.name: ${err.message}`, false);
    }
    throw err;
  }
  const rotated = existing && site.status?.storage?.credentialsVersion !== credentialsVersion;
  logger.info(
    { kind: 'Site', object, destination: stored.name },
    !existing ? 'Created the storage destination' : rotated ? "Updated the storage destination with its Secret's keys" : 'Updated the storage destination',
  );
  return { destination: stored.name, credentialsVersion };
}

/** The keys of the Secret: accessKeyId and secretAccessKey, both required. */
function storageCredentialsOf(secret: V1Secret, where: string): PutManagedDestination['credentials'] {
  const value = (key: string) => {
    const encoded = secret.data?.[key];
    return encoded === undefined ? secret.stringData?.[key] : Buffer.from(encoded, 'base64').toString('utf8');
  };
  const [accessKeyId, secretAccessKey] = [value('accessKeyId'), value('secretAccessKey')];
  const missing = [accessKeyId === undefined ? 'accessKeyId' : '', secretAccessKey === undefined ? 'secretAccessKey' : ''].filter(Boolean);
  // A Secret without the keys waits for its owner to fix it: a retry cannot help (the resync looks again).
  if (accessKeyId === undefined || secretAccessKey === undefined) throw new NotReady(REASONS.InvalidSpec, `${where} has no key ${missing.join(' or ')}`, false);
  return { accessKeyId, secretAccessKey };
}

function destinationMatches(existing: ManagedDestination, wanted: PutManagedDestination): boolean {
  return (
    existing.accountId === wanted.accountId &&
    existing.managedBy.uid === wanted.uid &&
    existing.name === wanted.name &&
    existing.endpoint === wanted.endpoint &&
    existing.bucket === wanted.bucket &&
    existing.region === wanted.region &&
    existing.pathStyle === wanted.pathStyle &&
    existing.keyTemplate === wanted.keyTemplate
  );
}
