/**
 * Storage destinations: an account's S3-compatible buckets, registered once (POST /api/destinations)
 * and named by captures (`storage: {destination}`), so that no capture body ever carries a
 * credential. The credentials are write-only: the store keeps them sealed at rest with the
 * signing-secret keys (secret-sealing.ts, purpose "destination credentials"), and only
 * getDestinationCredentials, which the upload calls, opens them.
 *
 * A destination's name is unique within its account; it is how the API, captures and the docs name
 * it. Fields are checked above the store (lib/destinations.ts); the store keeps what it is given.
 */
import { Conflict } from '../errors.ts';
import { secretSealer, type SecretKeys, type SecretSealer } from './secret-sealing.ts';
import type { ManagedBy, ManagedByRef } from './store.ts';

export interface DestinationCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Where a destination writes: the fields every form of it shares (the store's, the API's, the operator routes'). */
export interface DestinationFields {
  name: string;
  /** Where the S3 API answers, e.g. `https://s3.eu-west-1.amazonaws.com`. */
  endpoint: string;
  bucket: string;
  region: string;
  /** `endpoint/bucket/key` rather than `bucket.endpoint/key`. */
  pathStyle: boolean;
  /** The object key, with {id}, {date} and {format} filled in per capture. */
  keyTemplate: string;
}

export interface StorageDestination extends DestinationFields {
  id: string;
  accountId: string;
  /**
   * The Kubernetes Site whose `spec.storage` this destination is (the operator writes it): the
   * management API and the dashboard refuse to change or delete it. Null for the others.
   */
  managedBy: ManagedBy | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewDestination extends DestinationFields {
  accountId: string;
  credentials: DestinationCredentials;
  managedBy?: ManagedBy | null;
}

/** Any of the fields but the name (which is its identity), the account and the owner; credentials replace the pair. */
export type DestinationPatch = Partial<Omit<NewDestination, 'accountId' | 'name' | 'managedBy'>>;

export interface DestinationStore {
  /** Conflict when the account already has a destination of that name; NotFound for no such account. */
  createDestination(input: NewDestination): Promise<StorageDestination>;
  getDestination(accountId: string, name: string): Promise<StorageDestination | null>;
  listDestinations(accountId: string): Promise<StorageDestination[]>;
  updateDestination(accountId: string, name: string, patch: DestinationPatch): Promise<StorageDestination | null>;
  deleteDestination(accountId: string, name: string): Promise<boolean>;
  /** The credentials, opened; null for no such destination. Server-side only: never logged or answered. */
  getDestinationCredentials(accountId: string, name: string): Promise<DestinationCredentials | null>;
  /** The destination a Kubernetes Site owns (its `spec.storage`), in any account. */
  findDestinationByManagedBy(ref: ManagedByRef): Promise<StorageDestination | null>;
  /**
   * Creates or replaces, fields and credentials, the destination `managedBy` owns (the operator's
   * idempotent PUT). Conflict when it belongs to another account, or when its name is taken in the
   * account by another destination.
   */
  upsertManagedDestination(input: NewDestination & { managedBy: ManagedBy }): Promise<StorageDestination>;
}

/** Seals and opens a destination's credentials as one value: the pair is written and replaced together. */
export interface CredentialSealer {
  seal(credentials: DestinationCredentials): string;
  open(stored: string): DestinationCredentials;
  /** False when the stored value should be sealed again with the current key. */
  isCurrent(stored: string): boolean;
  /** The same value sealed with the current key. */
  reseal(stored: string): string;
}

export function credentialSealer(keys: SecretKeys | undefined): CredentialSealer {
  const sealer: SecretSealer = secretSealer(keys, 'viewfinder destination credentials');
  const open = (stored: string) => {
    const parsed = JSON.parse(sealer.open(stored)) as DestinationCredentials;
    return { accessKeyId: parsed.accessKeyId, secretAccessKey: parsed.secretAccessKey };
  };
  return {
    seal: (credentials) => sealer.seal(JSON.stringify({ accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey })),
    open,
    isCurrent: (stored) => sealer.isCurrent(stored),
    reseal: (stored) => sealer.seal(sealer.open(stored)),
  };
}

/**
 * An endpoint as stored: the URL's own spelling, without a trailing slash. The API stores it so and
 * the operator compares a Site's spec.storage.endpoint so.
 */
export function normalDestinationEndpoint(endpoint: string): string {
  return URL.parse(endpoint)!.href.replace(/\/+$/, '');
}

export function duplicateDestination(name: string): Conflict {
  return new Conflict(`A storage destination named ${name} already exists in this account`);
}
