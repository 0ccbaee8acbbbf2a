import { readInt, readList, type Env } from '../../../../lib/env.ts';
import { parseNetworkAllowlist, type NetworkAllowlist } from '../../../../lib/network-allowlist.ts';
import { loadConfiguredDestinations, type ConfiguredDestination } from './configured-destinations.ts';

/** Captures delivered to a client's bucket (docs/storage.md): what may be reached, the bounds of an upload, and (self-hosted) the destinations. */
export interface StorageConfig {
  /**
   * STORAGE_ENDPOINT_ALLOWLIST: the one opt-out of the network guard for destination endpoints
   * (CIDRs, addresses or exact host names, as PRIVATE_NETWORK_ALLOWLIST): an in-cluster object
   * store, say. Its own list, so that letting pages reach a private host never lets uploads go there,
   * nor the other way round.
   */
  endpointAllowlist: NetworkAllowlist;
  /** STORAGE_UPLOAD_TIMEOUT_MS: one upload's overall deadline, from resolving the endpoint to the answer's last byte. */
  uploadTimeoutMs: number;
  /** STORAGE_MAX_UPLOAD_MB: the largest object a capture may write; larger captures fail before a byte is sent. */
  maxUploadBytes: number;
  /** STORAGE_DESTINATIONS, self-hosted mode only: the destinations captures may name (configured-destinations.ts). */
  destinations: ConfiguredDestination[];
}

export function loadStorageConfig(env: Env): StorageConfig {
  return {
    endpointAllowlist: parseNetworkAllowlist(readList(env, 'STORAGE_ENDPOINT_ALLOWLIST'), 'STORAGE_ENDPOINT_ALLOWLIST'),
    uploadTimeoutMs: readInt(env, 'STORAGE_UPLOAD_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }),
    maxUploadBytes: readInt(env, 'STORAGE_MAX_UPLOAD_MB', 100, { min: 1, max: 5 * 1024 }) * 1024 * 1024,
    destinations: loadConfiguredDestinations(env),
  };
}
