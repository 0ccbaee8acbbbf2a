/**
 * An account's storage destinations as the management API sees them: registered with the endpoint
 * checked by the guard, answered without their credentials (hasCredentials: true instead).
 */
import { NotFound } from '../../../../lib/errors.ts';
import type { DestinationCredentials, DestinationPatch, StorageDestination } from '../../../../lib/store/destinations.ts';
import type { Store } from '../../../../lib/store/store.ts';
import type { StorageDelivery } from './delivery.ts';
import { DEFAULT_KEY_TEMPLATE } from './key-template.ts';

export interface DestinationView {
  name: string;
  endpoint: string;
  bucket: string;
  region: string;
  pathStyle: boolean;
  keyTemplate: string;
  hasCredentials: true;
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
    createdAt: destination.createdAt.toISOString(),
    updatedAt: destination.updatedAt.toISOString(),
  };
}

const notFound = (name: string) => new NotFound(`Storage destination ${name} not found`);

/** An endpoint as stored: the URL's own spelling, without a trailing slash. */
const normalEndpoint = (endpoint: string) => URL.parse(endpoint)!.href.replace(/\/+$/, '');

export function destinationOperations(store: Store, storage: StorageDelivery, accountId: string) {
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
      const current = await store.getDestination(accountId, name);
      if (!current) throw notFound(name);
      const patch: DestinationPatch = { ...update, ...(update.endpoint !== undefined ? { endpoint: normalEndpoint(update.endpoint) } : {}) };
      // The place that will be written to, whichever of its parts changed, passes the guard again.
      if (patch.endpoint !== undefined || patch.bucket !== undefined || patch.pathStyle !== undefined) await storage.checkEndpoint({ ...current, ...patch });
      const updated = await store.updateDestination(accountId, name, patch);
      if (!updated) throw notFound(name);
      return destinationView(updated);
    },
    async delete(name: string): Promise<void> {
      if (!(await store.deleteDestination(accountId, name))) throw notFound(name);
    },
  };
}
