import type { V1Secret } from '@kubernetes/client-node';
import { hashApiKey } from '../../../lib/api-keys.ts';
import type { ManagedKey, PutManagedKey } from '../../../lib/operator-api.ts';
import { REASONS, withReady } from '../conditions.ts';
import {
  API_KEY_LABEL,
  MANAGED_BY_LABEL,
  OPERATOR_NAME,
  ROTATION_ANNOTATION,
  SECRET_KEY_FIELD,
  type ApiKeyResource,
} from '../resources.ts';
import {
  NotReady,
  apiCall,
  readyState,
  reconcileResource,
  requireAccount,
  writeStatus,
  type ControllerDeps,
  type ReconcileResult,
} from './common.ts';

/**
 * The ApiKey controller: an ApiKey resource becomes a key in the API's store, owned by it, and the
 * key's plaintext goes to a Secret that the ApiKey owns (so the garbage collector removes it with
 * the ApiKey). The store keeps only a hash, so the Secret is the one copy of the plaintext:
 *
 * - a raised spec.rotation (above the rotation the Secret was written for) regenerates the key;
 * - a Secret that was deleted, or whose key no longer matches the store's hash (a crash between
 *   regenerating and writing), cannot be rebuilt: the key is regenerated and a new Secret written.
 *   The API checks the Secret's key by its hash (verify), so the key never travels to be checked.
 *
 * The plaintext is never logged, put in status or in an event.
 */
export function reconcileApiKey(deps: ControllerDeps, namespace: string, name: string): Promise<ReconcileResult> {
  const { api, logger } = deps;
  return reconcileResource<ApiKeyResource>(deps, 'ApiKey', namespace, name, {
    // The Secret carries an ownerReference to the ApiKey: the garbage collector removes it.
    async removeFromStore() {
      const keyId = await api.deleteKey(namespace, name);
      if (keyId) logger.info({ kind: 'ApiKey', object: `${namespace}/${name}`, keyId }, 'Revoked the key');
    },
    apply: (resource, now) => applyApiKey(deps, resource, now),
  });
}

async function applyApiKey(deps: ControllerDeps, current: ApiKeyResource, now: Date): Promise<void> {
  const { kube, api, logger } = deps;
  const { namespace, name } = current.metadata;
  const { spec, metadata } = current;
  await requireAccount(api, spec.account);
  const wanted: PutManagedKey = { accountId: spec.account, name: `${namespace}/${name}`, siteId: null, restrictDomains: false, uid: metadata.uid };
  if (spec.siteRef) {
    const site = await apiCall(() => api.getSite(namespace, spec.siteRef as string));
    if (!site) throw new NotReady(REASONS.SiteNotFound, `Site ${spec.siteRef} does not exist in namespace ${namespace}, or is not Ready yet`);
    if (site.accountId !== spec.account) {
      throw new NotReady(REASONS.AccountMismatch, `Site ${spec.siteRef} belongs to account ${site.accountId}, not to ${spec.account}`);
    }
    Object.assign(wanted, { siteId: site.id, restrictDomains: spec.restrictDomains ?? false });
  } else if (spec.restrictDomains) {
    throw new NotReady(REASONS.InvalidSpec, 'spec.restrictDomains needs spec.siteRef: a key without a site is full-access', false);
  }

  const secretName = spec.secretName ?? name;
  const secret = await kube.getSecret(namespace, secretName);
  if (secret && !ownedBy(secret, metadata.uid)) {
    throw new NotReady(
      REASONS.SecretConflict,
      `Secret ${secretName} already exists and does not belong to this ApiKey: set spec.secretName to another name, or delete that Secret`,
    );
  }

  const existing = await apiCall(() => api.getKey(namespace, name));
  let stored: ManagedKey;
  let plaintext: string | null = null;
  if (existing && keyMatches(existing, wanted)) {
    stored = existing;
  } else {
    const upserted = await apiCall(() => api.putKey(namespace, name, wanted));
    stored = upserted;
    plaintext = upserted.key;
  }
  /** Whether a Secret holds the store's current key: the API compares hashes, the key stays here. */
  const secretHolds = async (candidate: V1Secret) => {
    const held = decodeKey(candidate);
    return held !== undefined && (await apiCall(() => api.keyMatches(namespace, name, hashApiKey(held))));
  };

  const rotation = spec.rotation ?? 0;
  // After a change of spec.secretName, the Secret written under the old name (still this ApiKey's).
  const previousName = current.status?.secretName;
  const previous = previousName && previousName !== secretName ? await kube.getSecret(namespace, previousName) : null;
  const ownedPrevious = previous && ownedBy(previous, metadata.uid) ? previous : null;

  let issued: 'created' | 'rotated' | 'secretLost' | null = plaintext === null ? null : 'created';
  if (plaintext === null) {
    if (!secret && ownedPrevious && rotation <= secretRotation(ownedPrevious) && (await secretHolds(ownedPrevious))) {
      // A rename: the key moves to the new Secret as it is, nothing is regenerated.
      await kube.createSecret(namespace, secretFor(current, secretName, decodeKey(ownedPrevious) as string, rotation, null));
      logger.info({ kind: 'ApiKey', object: `${namespace}/${name}`, keyId: stored.id, from: previousName, to: secretName }, 'Moved the key to another Secret');
    } else if (!secret) issued = 'secretLost';
    else if (rotation > secretRotation(secret)) issued = 'rotated';
    else if (!(await secretHolds(secret))) issued = 'secretLost';
    if (issued) {
      const regenerated = await apiCall(() => api.regenerateKey(namespace, name));
      // Deleted meanwhile (by a finalizer of a racing replica, say): the next reconcile creates it again.
      if (!regenerated) throw new NotReady(REASONS.ApiUnavailable, `Key ${stored.id} vanished from the store while it was regenerated`);
      stored = regenerated;
      plaintext = regenerated.key;
    }
  }

  if (plaintext !== null && issued !== null) {
    await kube[secret ? 'replaceSecret' : 'createSecret'](namespace, secretFor(current, secretName, plaintext, rotation, secret));
    logger.info({ kind: 'ApiKey', object: `${namespace}/${name}`, keyId: stored.id, prefix: stored.prefix, secretName, rotation }, issuedLog[issued]);
    await deps.events.record(current, issued === 'secretLost' ? 'Warning' : 'Normal', issuedEvent[issued].reason, issuedEvent[issued].message(stored, secretName, rotation));
  }
  if (ownedPrevious) await kube.deleteSecret(namespace, previousName as string);

  const scope = stored.kind === 'full' ? 'full-access' : `for site ${stored.siteId}${stored.restrictDomains ? ', domain-restricted' : ''}`;
  await writeStatus(kube, current, {
    keyId: stored.id,
    prefix: stored.prefix,
    secretName,
    lastRotatedAt: issued !== null ? now.toISOString() : (current.status?.lastRotatedAt ?? stored.createdAt),
    observedGeneration: metadata.generation,
    conditions: withReady(current.status?.conditions, readyState(`Key ${stored.prefix}… (${scope}) is in Secret ${secretName}`), metadata.generation, now),
  });
}

const issuedLog = {
  created: 'Issued the key and wrote its Secret',
  rotated: 'Rotated the key and replaced its Secret',
  secretLost: 'Regenerated the key because its Secret was missing or stale',
} as const;

const issuedEvent = {
  created: { reason: 'KeyIssued', message: (key: ManagedKey, secret: string) => `Issued key ${key.prefix}… into Secret ${secret}` },
  rotated: {
    reason: 'KeyRotated',
    message: (key: ManagedKey, secret: string, rotation: number) => `Rotation ${rotation}: regenerated the key (now ${key.prefix}…); the old one stopped working; Secret ${secret} holds the new one`,
  },
  secretLost: {
    reason: 'SecretRecreated',
    message: (key: ManagedKey, secret: string) =>
      `Secret ${secret} was missing or did not hold the current key, and the store keeps only a hash: regenerated the key (now ${key.prefix}…) and wrote the Secret again`,
  },
} as const;

function keyMatches(existing: ManagedKey, wanted: PutManagedKey): boolean {
  return (
    existing.accountId === wanted.accountId &&
    existing.name === wanted.name &&
    existing.kind === (wanted.siteId === null ? 'full' : 'site') &&
    existing.siteId === wanted.siteId &&
    existing.restrictDomains === wanted.restrictDomains &&
    existing.managedBy.uid === wanted.uid
  );
}

export function ownedBy(secret: V1Secret, uid: string): boolean {
  return secret.metadata?.ownerReferences?.some((owner) => owner.uid === uid && owner.controller === true) ?? false;
}

function secretRotation(secret: V1Secret | null): number {
  const value = Number(secret?.metadata?.annotations?.[ROTATION_ANNOTATION]);
  return Number.isInteger(value) ? value : -1;
}

function decodeKey(secret: V1Secret): string | undefined {
  const encoded = secret.data?.[SECRET_KEY_FIELD];
  return encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}

function secretFor(owner: ApiKeyResource, name: string, plaintext: string, rotation: number, existing: V1Secret | null): V1Secret {
  const { namespace, uid } = owner.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name,
      namespace,
      ...(existing?.metadata?.resourceVersion ? { resourceVersion: existing.metadata.resourceVersion } : {}),
      labels: { ...existing?.metadata?.labels, [MANAGED_BY_LABEL]: OPERATOR_NAME, [API_KEY_LABEL]: owner.metadata.name },
      annotations: { ...existing?.metadata?.annotations, [ROTATION_ANNOTATION]: String(rotation) },
      ownerReferences: [{ apiVersion: owner.apiVersion, kind: 'ApiKey', name: owner.metadata.name, uid, controller: true, blockOwnerDeletion: true }],
    },
    data: { [SECRET_KEY_FIELD]: Buffer.from(plaintext, 'utf8').toString('base64') },
  };
}
