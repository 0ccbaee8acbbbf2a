/**
 * Captures delivered to a client's bucket (docs/storage.md): `storage: {destination, key?, presign?}`
 * on POST /api/screenshot and POST /api/captures names a destination the account registered
 * (POST /api/destinations); the capture is written there as one object and the answer names it
 * (bucket, key, URL, ETag, and a presigned GET URL when asked) instead of carrying the image.
 *
 * The endpoint passes the network guard three times: when the destination is registered, when a
 * capture asks for it (before anything renders), and at the upload itself, whose connection goes to
 * the address just checked (DNS may have changed since). Only STORAGE_ENDPOINT_ALLOWLIST opens
 * private addresses to it.
 */
import { randomBytes } from 'node:crypto';
import { BadGateway, BadRequest, CaptureFailed, Forbidden, ServiceUnavailable, type HttpError } from '../../../../lib/errors.ts';
import { MAX_PRESIGN_SECONDS, presignUrl } from '../../../../lib/blobs/sigv4.ts';
import type { StorageDestination } from '../../../../lib/store/destinations.ts';
import { MIME_TYPES, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';
import { createNetworkGuard, type Lookup, type NetworkGuard } from '../../../renderer/src/guard/network-guard.ts';
import type { StorageConfig } from './config.ts';
import type { DestinationSource } from './configured-destinations.ts';
import { expandKey } from './key-template.ts';
import { recordUpload } from './metrics.ts';
import { objectUrl, putObject, resolveEndpoint, StorageFailure, uploadHost } from './upload.ts';

export { StorageFailure };

/** What a capture asks: the destination by name, and optionally its own key template and a presigned URL's lifetime. */
export interface StorageOption {
  destination: string;
  key?: string;
  presign?: number;
}

/** Where the capture went: what the answer, the capture's status and its webhook carry instead of the image. */
export interface StoredObject {
  destination: string;
  bucket: string;
  key: string;
  /** The object's URL, unsigned: readable as it is only if the bucket allows it (nothing here sets an ACL). */
  url: string;
  etag?: string;
  /** Only with `presign`: a GET URL signed with the destination's keys, valid until presignedUrlExpiresAt. */
  presignedUrl?: string;
  presignedUrlExpiresAt?: string;
}

/** The capture to write: its id and time fill the key template. */
export interface CaptureToStore {
  id: string;
  createdAt: Date;
  format: CaptureFormat;
  image: Buffer;
}

export interface StorageDelivery {
  /**
   * Registration: the endpoint (its bucket's host in virtual-hosted style) passes the guard now.
   * 403 when it is refused, 400 when it does not resolve, 503 when the resolver does not answer.
   */
  checkEndpoint(place: Pick<StorageDestination, 'endpoint' | 'bucket' | 'pathStyle'>): Promise<void>;
  /**
   * Before a synchronous capture renders: the destination exists (400) and its endpoint passes the
   * guard (403); one that cannot be resolved or reached is a 502 at once, before anything renders.
   */
  prepareNow(accountId: string, option: StorageOption): Promise<StorageDestination>;
  /** At an asynchronous submit: the destination exists (400) and its endpoint is not refused (403), as checkEndpoint. */
  prepareLater(accountId: string, option: StorageOption): Promise<StorageDestination>;
  /** Writes the capture; throws StorageFailure (or a 400 when the destination is gone). */
  deliver(accountId: string, option: StorageOption, capture: CaptureToStore, signal?: AbortSignal): Promise<StoredObject>;
}

/**
 * `store` is where destinations are looked up: the hosted store, by account, or in self-hosted mode
 * the configured ones (configured-destinations.ts); the delivery is the same.
 */
export function createStorageDelivery(store: DestinationSource, config: StorageConfig, lookup?: Lookup): StorageDelivery {
  const guard: NetworkGuard = createNetworkGuard(config.endpointAllowlist, lookup);

  const find = async (accountId: string, name: string) => {
    const destination = await store.getDestination(accountId, name);
    if (!destination) {
      throw new BadRequest(store.unknownDestination?.(name) ?? `storage.destination: this account has no storage destination named ${name} (POST /api/destinations registers one)`);
    }
    return destination;
  };

  const checkEndpoint: StorageDelivery['checkEndpoint'] = async (place) => {
    try {
      await resolveEndpoint(guard, uploadHost(place), config.uploadTimeoutMs);
    } catch (err) {
      if (!(err instanceof StorageFailure)) throw err;
      if (err.outcome === 'refused') throw new Forbidden(err.message);
      if (err.outcome === 'timeout') throw new ServiceUnavailable(`${err.message}; try again`, 1);
      throw new BadRequest(err.message);
    }
  };

  return {
    checkEndpoint,
    async prepareNow(accountId, option) {
      const destination = await find(accountId, option.destination);
      try {
        await resolveEndpoint(guard, uploadHost(destination), config.uploadTimeoutMs);
      } catch (err) {
        if (!(err instanceof StorageFailure)) throw err;
        recordUpload(err.outcome, 0);
        throw err;
      }
      return destination;
    },
    async prepareLater(accountId, option) {
      const destination = await find(accountId, option.destination);
      await checkEndpoint(destination);
      return destination;
    },
    async deliver(accountId, option, capture, signal) {
      const destination = await find(accountId, option.destination);
      const credentials = await store.getDestinationCredentials(accountId, option.destination);
      if (!credentials) throw new BadRequest(store.unknownDestination?.(option.destination) ?? `storage.destination: this account has no storage destination named ${option.destination} any more`);
      const key = expandKey(option.key ?? destination.keyTemplate, { id: capture.id, date: capture.createdAt.toISOString().slice(0, 10), format: capture.format });
      const started = performance.now();
      let etag: string | undefined;
      try {
        ({ etag } = await putObject(guard, {
          destination,
          credentials,
          key,
          body: capture.image,
          contentType: MIME_TYPES[capture.format],
          timeoutMs: config.uploadTimeoutMs,
          maxBytes: config.maxUploadBytes,
          signal,
        }));
      } catch (err) {
        if (err instanceof StorageFailure) recordUpload(err.outcome, (performance.now() - started) / 1000);
        throw err;
      }
      recordUpload('uploaded', (performance.now() - started) / 1000);
      const url = objectUrl(destination, key);
      const stored: StoredObject = { destination: destination.name, bucket: destination.bucket, key, url: url.href, ...(etag ? { etag } : {}) };
      if (option.presign !== undefined) {
        const now = new Date();
        stored.presignedUrl = presignUrl({ method: 'GET', url, region: destination.region, credentials, expiresSeconds: option.presign, now }).href;
        stored.presignedUrlExpiresAt = new Date(now.getTime() + option.presign * 1000).toISOString();
      }
      return stored;
    },
  };
}

export { MAX_PRESIGN_SECONDS };

/** Rethrows a failed upload as a synchronous capture's answer (storageHttpError); anything else as it is. */
export function rethrowStorage(err: unknown): never {
  throw err instanceof StorageFailure ? storageHttpError(err) : err;
}

/** A synchronous capture's answer to a failed upload: 403 for the guard's refusal, 502 naming the destination's reason, 500 past the size bound. */
export function storageHttpError(failure: StorageFailure): HttpError {
  if (failure.outcome === 'refused') return new Forbidden(failure.message);
  if (failure.outcome === 'too_large') return new CaptureFailed(`Screenshot generation failed: ${failure.message}`);
  return new BadGateway(failure.message);
}

/** An id for a synchronous capture, for {id} in key templates (asynchronous ones use their job's id). */
export function newCaptureId(): string {
  return `cap_${randomBytes(12).toString('hex')}`;
}
