/**
 * Storage destinations of self-hosted mode (docs/storage.md, "Self-hosted mode"): no accounts and no
 * management API, so they come from the service's configuration, STORAGE_DESTINATIONS: a JSON list
 * of destinations as POST /api/destinations takes them, or the path of a file holding it (a mounted
 * Secret, say). Each credential is the value itself or {"env": "NAME"}, read from that variable, so
 * the list can sit in plain configuration and the keys in the environment. Read and checked once at
 * start-up with the management API's own schema and rules; the upload (delivery.ts) is the hosted one.
 */
import { readFileSync } from 'node:fs';
import { BadRequest } from '../../../../lib/errors.ts';
import { ConfigError, readOptionalString, type Env } from '../../../../lib/env.ts';
import { normalDestinationEndpoint, type DestinationCredentials, type StorageDestination } from '../../../../lib/store/destinations.ts';
import { compileValidator } from '../validation.ts';
import type { StorageConfig } from './config.ts';
import { createStorageDelivery, type StorageDelivery } from './delivery.ts';
import { DEFAULT_KEY_TEMPLATE } from './key-template.ts';
import { createDestinationSchema, destinationMessages, destinationProblems } from './schemas.ts';

/** A destination read from STORAGE_DESTINATIONS: the stored shape, with its credentials beside it. */
export interface ConfiguredDestination {
  destination: StorageDestination;
  credentials: DestinationCredentials;
}

/** Where a capture's `storage.destination` is looked up: the hosted store (by account), or the configured list. */
export interface DestinationSource {
  getDestination(accountId: string, name: string): Promise<StorageDestination | null>;
  getDestinationCredentials(accountId: string, name: string): Promise<DestinationCredentials | null>;
  /** The 400's text for a name it does not know: where destinations come from. */
  unknownDestination?(name: string): string;
}

/** The owner self-hosted destinations are looked up under: there is one, the service. */
export const SELF_HOSTED_DESTINATIONS = 'self-hosted';

const validate = compileValidator<{ name: string; endpoint: string; bucket: string; region?: string; pathStyle?: boolean; keyTemplate?: string; credentials: DestinationCredentials }>(
  createDestinationSchema,
  destinationMessages,
  destinationProblems,
);

export function loadConfiguredDestinations(env: Env): ConfiguredDestination[] {
  const value = readOptionalString(env, 'STORAGE_DESTINATIONS');
  if (value === undefined) return [];
  let text = value;
  if (!/^[[{]/.test(value)) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (err) {
      throw new ConfigError(`STORAGE_DESTINATIONS names the file ${value}, which cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    // Never the text: it holds credentials.
    throw new ConfigError('STORAGE_DESTINATIONS is not JSON: give a list of destinations, [{"name": …, "endpoint": …, "bucket": …, "credentials": {…}}], or the path of a file holding it');
  }
  if (!Array.isArray(list)) throw new ConfigError('STORAGE_DESTINATIONS must be a JSON list of destinations');
  const names = new Set<string>();
  const now = new Date();
  return list.map((entry: unknown, index) => {
    const where = `STORAGE_DESTINATIONS[${index}]`;
    let given;
    try {
      given = validate(withCredentialsFromEnv(entry, env, where));
    } catch (err) {
      if (err instanceof BadRequest) throw new ConfigError(`${where}: ${err.message}`);
      throw err;
    }
    if (names.has(given.name)) throw new ConfigError(`${where}: a second destination named ${given.name}; names are unique`);
    names.add(given.name);
    return {
      destination: {
        id: `config_${given.name}`,
        accountId: SELF_HOSTED_DESTINATIONS,
        name: given.name,
        endpoint: normalDestinationEndpoint(given.endpoint),
        bucket: given.bucket,
        region: given.region ?? 'us-east-1',
        pathStyle: given.pathStyle ?? false,
        keyTemplate: given.keyTemplate ?? DEFAULT_KEY_TEMPLATE,
        managedBy: null,
        createdAt: now,
        updatedAt: now,
      },
      credentials: given.credentials,
    };
  });
}

/** {"env": "NAME"} in place of a credential: that variable's value, which must be set. */
function withCredentialsFromEnv(entry: unknown, env: Env, where: string): unknown {
  if (typeof entry !== 'object' || entry === null) return entry;
  const credentials = (entry as { credentials?: unknown }).credentials;
  if (typeof credentials !== 'object' || credentials === null) return entry;
  const resolved = Object.fromEntries(
    Object.entries(credentials).map(([key, value]) => {
      if (typeof value !== 'object' || value === null || typeof (value as { env?: unknown }).env !== 'string') return [key, value];
      const name = (value as { env: string }).env;
      const fromEnv = readOptionalString(env, name);
      if (fromEnv === undefined) throw new ConfigError(`${where}: credentials.${key} is read from ${name}, which is not set`);
      return [key, fromEnv];
    }),
  );
  return { ...entry, credentials: resolved };
}

/** The configured destinations as a DestinationSource: the same lookups the hosted store answers. */
export function configuredDestinationSource(configured: readonly ConfiguredDestination[]): DestinationSource {
  const byName = new Map(configured.map((entry) => [entry.destination.name, entry]));
  return {
    getDestination: async (_owner, name) => byName.get(name)?.destination ?? null,
    getDestinationCredentials: async (_owner, name) => byName.get(name)?.credentials ?? null,
    unknownDestination: (name) =>
      `storage.destination: no storage destination named ${name} is configured (STORAGE_DESTINATIONS names ${byName.size === 0 ? 'none' : [...byName.keys()].join(', ')})`,
  };
}

/** Self-hosted mode's delivery: the hosted one on the configured destinations; undefined when none is configured. */
export function selfHostedStorageDelivery(config: StorageConfig): StorageDelivery | undefined {
  return config.destinations.length === 0 ? undefined : createStorageDelivery(configuredDestinationSource(config.destinations), config);
}
