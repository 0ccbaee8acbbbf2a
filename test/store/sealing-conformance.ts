import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { SecretKeys } from '../../lib/store/secret-sealing.ts';
import type { Store } from '../../lib/store/store.ts';

export interface SealingBackend {
  /** Opens the same data each time (one DATA_DIR, one database) with these keys. */
  open(keys: SecretKeys): Promise<Store>;
  /** The signing secret exactly as the backend keeps it, read around the store. */
  rawSigningSecret(keyId: string): Promise<string | null>;
  /** A storage destination's credentials exactly as the backend keeps them, read around the store. */
  rawDestinationCredentials(accountId: string, name: string): Promise<string | null>;
  /** Writes a plain signing secret as a store from before sealing did. */
  writePlainSigningSecret(keyId: string, secret: string): Promise<void>;
  /** Removes the data once the case is done. */
  cleanup(): Promise<void>;
}

/**
 * Signing secrets at rest: part of the store conformance, run by sqlite.test.ts and mongo.test.ts
 * against their own backend (each with the raw read only it can make).
 */
export function sealingConformance(backend: () => SealingBackend): void {
  describe('signing secrets sealed at rest (SIGNING_SECRETS_KEY)', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    let current: SealingBackend;
    const opened: Store[] = [];
    const open = async (keys: SecretKeys) => {
      const store = await current.open(keys);
      opened.push(store);
      return store;
    };
    beforeEach(() => {
      current = backend();
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
      await current.cleanup();
    });

    it('keeps only a sealed form: the raw value neither is nor contains the secret, and getSigningSecret opens it (created, regenerated, managed)', async () => {
      const store = await open({ current: oldKey });
      const account = await store.createAccount({ name: 'Acme' });
      const created = await store.createKey({ accountId: account.id, name: 'k', kind: 'full' });
      const regenerated = (await store.regenerateKey((await store.createKey({ accountId: account.id, name: 'r', kind: 'full' })).key.id))!;
      const managed = await store.upsertManagedKey({ accountId: account.id, name: 'm', kind: 'full', managedBy: { kind: 'ApiKey', namespace: 'ns', name: 'm', uid: 'u' } });
      for (const [id, secret] of [
        [created.key.id, created.signingSecret],
        [regenerated.key.id, regenerated.signingSecret],
        [managed.key.id, managed.signingSecret as string],
      ] as const) {
        const raw = await current.rawSigningSecret(id);
        expect(raw).to.match(/^sealed:v1:[0-9a-f]{12}:/);
        expect(raw).to.not.include(secret);
        expect(await store.getSigningSecret(id)).to.equal(secret);
      }
    });

    it('cannot be read by a process without the key (a copy of the store), and says which key is missing', async () => {
      const store = await open({ current: oldKey });
      const account = await store.createAccount({ name: 'Acme' });
      const { key } = await store.createKey({ accountId: account.id, name: 'k', kind: 'full' });
      const copy = await open({});
      const err = await copy.getSigningSecret(key.id).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).to.match(/^A signing secret is sealed with key [0-9a-f]{12}, which this process does not have/);
    });

    it('rotates: with the new key current and the old one previous, old secrets still open; resealSigningSecrets moves them and plain ones to the new key, after which the old key is not needed', async () => {
      const before = await open({ current: oldKey });
      const account = await before.createAccount({ name: 'Acme' });
      const sealedOld = await before.createKey({ accountId: account.id, name: 'old', kind: 'full' });
      const plain = await before.createKey({ accountId: account.id, name: 'plain', kind: 'full' });
      await current.writePlainSigningSecret(plain.key.id, 'p'.repeat(64));

      const rotating = await open({ current: newKey, previous: [oldKey] });
      expect(await rotating.getSigningSecret(sealedOld.key.id)).to.equal(sealedOld.signingSecret);
      expect(await rotating.getSigningSecret(plain.key.id), 'a plain secret from before sealing still reads').to.equal('p'.repeat(64));
      expect(await rotating.resealSigningSecrets()).to.equal(2);
      expect(await rotating.resealSigningSecrets(), 'nothing left to move').to.equal(0);
      expect(await current.rawSigningSecret(plain.key.id)).to.match(/^sealed:v1:/);

      const after = await open({ current: newKey });
      expect(await after.getSigningSecret(sealedOld.key.id)).to.equal(sealedOld.signingSecret);
      expect(await after.getSigningSecret(plain.key.id)).to.equal('p'.repeat(64));
    });

    describe("storage destinations' credentials", () => {
      const credentials = { accessKeyId: 'AKIADESTINATIONTEST1', secretAccessKey: 'destination-secret-0123456789abcdefghij' };
      const destination = (accountId: string) => ({
        accountId,
        name: 'archive',
        endpoint: 'https://s3.example.com',
        bucket: 'shots',
        region: 'us-east-1',
        pathStyle: true,
        keyTemplate: '{id}.{format}',
        credentials,
      });

      it('keeps only a sealed form (neither key nor secret in it), bound to its use, and opens it for the upload only', async () => {
        const store = await open({ current: oldKey });
        const account = await store.createAccount({ name: 'Acme' });
        await store.createDestination(destination(account.id));
        const raw = await current.rawDestinationCredentials(account.id, 'archive');
        expect(raw).to.match(/^sealed:v1:[0-9a-f]{12}:/);
        expect(raw).to.not.include(credentials.secretAccessKey);
        expect(raw).to.not.include(credentials.accessKeyId);
        expect(await store.getDestinationCredentials(account.id, 'archive')).to.deep.equal(credentials);
        const copy = await open({});
        const err = await copy.getDestinationCredentials(account.id, 'archive').then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err?.message).to.match(/^A storage destination's credentials are sealed with key [0-9a-f]{12}, which this process does not have/);
      });

      it('moves to the new key with resealSigningSecrets (counted with the signing secrets), after which the old key is not needed', async () => {
        const before = await open({ current: oldKey });
        const account = await before.createAccount({ name: 'Acme' });
        await before.createDestination(destination(account.id));
        const rotating = await open({ current: newKey, previous: [oldKey] });
        expect(await rotating.resealSigningSecrets()).to.equal(1);
        expect(await rotating.resealSigningSecrets()).to.equal(0);
        const after = await open({ current: newKey });
        expect(await after.getDestinationCredentials(account.id, 'archive')).to.deep.equal(credentials);
      });
    });
  });
}
