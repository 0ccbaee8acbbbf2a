/**
 * An account's storage destinations as the management API sees them: registered with the endpoint
 * checked by the guard, answered without their credentials (hasCredentials: true instead).
 */
import { BadRequest, Forbidden, NotFound } from '../../../../lib/errors.ts';
import { managedConflict } from '../../../../lib/management.ts';
import type { ManagedDestination, PutManagedDestination } from '../../../../lib/operator-api.ts';
import { normalDestinationEndpoint, type DestinationCredentials, type DestinationFields, type DestinationPatch, type StorageDestination } from '../../../../lib/store/destinations.ts';
import type { ManagedBy, Store } from '../../../../lib/store/store.ts';
import type { StorageDelivery } from './delivery.ts';
import { DEFAULT_KEY_TEMPLATE } from './key-template.ts';

export interface DestinationView extends DestinationFields {
  hasCredentials: true;
  /** The Kubernetes Site whose spec.storage this is: changed and deleted there only. */
  managedBy: ManagedBy | null;
  createdAt: string;
  updatedAt: string;
}

export interface DestinationInput {
  name: string;
  endpoint: string;
  bucket: string;
  region?: string;
  pathStyle?: boolean;
  keyTemplate?: string;
  credentials: DestinationCredentials;
}

export type DestinationUpdate = Partial<Omit<DestinationInput, 'name'>>;

export function destinationView(destination: StorageDestination): DestinationView {
  return {
    name: destination.name,
    endpoint: destination.endpoint,
    bucket: destination.bucket,
    region: destination.region,
    pathStyle: destination.pathStyle,
    keyTemplate: destination.keyTemplate,
    hasCredentials: true,
    managedBy: destination.managedBy,
    createdAt: destination.createdAt.toISOString(),
    updatedAt: destination.updatedAt.toISOString(),
  };
}

const notFound = (name: string) => new NotFound(`Storage destination ${name} not found`);

const normalEndpoint = normalDestinationEndpoint;

export function destinationOperations(store: Store, storage: StorageDelivery, accountId: string) {
  /** One a Site owns is changed in Kubernetes, as managed sites and keys are: its next reconcile would undo the change. */
  const unmanaged = async (name: string) => {
    const destination = await store.getDestination(accountId, name);
    if (!destination) throw notFound(name);
    if (destination.managedBy) throw managedConflict('Storage destination', name, destination.managedBy);
    return destination;
  };
  return {
    async create(input: DestinationInput): Promise<DestinationView> {
      const fields = {
        endpoint: normalEndpoint(input.endpoint),
        bucket: input.bucket,
        region: input.region ?? 'us-east-1',
        pathStyle: input.pathStyle ?? false,
        keyTemplate: input.keyTemplate ?? DEFAULT_KEY_TEMPLATE,
      };
      await storage.checkEndpoint(fields);
      return destinationView(await store.createDestination({ accountId, name: input.name, ...fields, credentials: input.credentials }));
    },
    async list(): Promise<DestinationView[]> {
      return (await store.listDestinations(accountId)).map(destinationView);
    },
    async get(name: string): Promise<DestinationView> {
      const destination = await store.getDestination(accountId, name);
      if (!destination) throw notFound(name);
      return destinationView(destination);
    },
    async update(name: string, update: DestinationUpdate): Promise<DestinationView> {
      const current = await unmanaged(name);
      const patch: DestinationPatch = { ...update, ...(update.endpoint !== undefined ? { endpoint: normalEndpoint(update.endpoint) } : {}) };
      // The place that will be written to, whichever of its parts changed, passes the guard again.
      if (patch.endpoint !== undefined || patch.bucket !== undefined || patch.pathStyle !== undefined) await storage.checkEndpoint({ ...current, ...patch });
      const updated = await store.updateDestination(accountId, name, patch);
      if (!updated) throw notFound(name);
      return destinationView(updated);
    },
    async delete(name: string): Promise<void> {
      await unmanaged(name);
      if (!(await store.deleteDestination(accountId, name))) throw notFound(name);
    },
  };
}

/**
 * The operator's side (issue #43): the destination a Kubernetes Site's spec.storage declares,
 * looked up by the Site, written whole (fields and credentials from the Site's Secret) by an
 * idempotent PUT, deleted with the field or the Site.
 */
export function managedDestinationOperations(store: Store, storage: StorageDelivery) {
  const ref = (namespace: string, name: string) => ({ kind: 'Site' as const, namespace, name });
  const managed = (destination: StorageDestination): ManagedDestination => ({
    ...destinationView(destination),
    accountId: destination.accountId,
    managedBy: destination.managedBy as ManagedBy,
  });
  return {
    async get(namespace: string, name: string): Promise<ManagedDestination> {
      const destination = await store.findDestinationByManagedBy(ref(namespace, name));
      if (!destination) throw new NotFound(`No storage destination is managed by Site ${namespace}/${name}`);
      return managed(destination);
    },
    async put(namespace: string, name: string, input: PutManagedDestination): Promise<{ destination: ManagedDestination; created: boolean }> {
      const fields = { endpoint: normalEndpoint(input.endpoint), bucket: input.bucket, pathStyle: input.pathStyle };
      try {
        await storage.checkEndpoint(fields);
      } catch (err) {
        // The operator reads 403 as its token refused: a refused endpoint is the spec's fault, said as such.
        if (err instanceof Forbidden) throw new BadRequest(`spec.storage.endpoint: ${err.message}`);
        throw err;
      }
      const existed = (await store.findDestinationByManagedBy(ref(namespace, name))) !== null;
      const destination = await store.upsertManagedDestination({
        accountId: input.accountId,
        name: input.name,
        ...fields,
        region: input.region,
        keyTemplate: input.keyTemplate,
        credentials: input.credentials,
        managedBy: { kind: 'Site', namespace, name, uid: input.uid },
      });
      return { destination: managed(destination), created: !existed };
    },
    /** Idempotent: the name of the deleted destination, or null when there was none. */
    async delete(namespace: string, name: string): Promise<string | null> {
      const destination = await store.findDestinationByManagedBy(ref(namespace, name));
      if (!destination) return null;
      await store.deleteDestination(destination.accountId, destination.name);
      return destination.name;
    },
  };
}
