import { expect } from 'chai';
import { Conflict, NotFound } from '../../lib/errors.ts';
import type { NewDestination } from '../../lib/store/destinations.ts';
import type { Account, Store } from '../../lib/store/store.ts';

/** Storage destinations: part of the store conformance suite (conformance.ts calls this inside its own setup). */
export function destinationStoreConformance(current: () => { store: Store; account: Account; other: Account }): void {
  const credentials = { accessKeyId: 'AKIAEXAMPLE000000001', secretAccessKey: 'secret/with+symbols=0123456789' };
  const input = (accountId: string, overrides: Partial<NewDestination> = {}): NewDestination => ({
    accountId,
    name: 'archive',
    endpoint: 'https://s3.eu-west-1.amazonaws.com',
    bucket: 'acme-shots',
    region: 'eu-west-1',
    pathStyle: false,
    keyTemplate: 'shots/{date}/{id}.{format}',
    credentials,
    ...overrides,
  });
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err as Error,
    );

  describe('storage destinations', () => {
    it('creates a destination and reads it back by account and name, without its credentials', async () => {
      const { store, account } = current();
      const created = await store.createDestination(input(account.id));
      expect(created.id).to.match(/^dest_[0-9a-f]{24}$/);
      expect(created).to.deep.include({ accountId: account.id, name: 'archive', endpoint: 'https://s3.eu-west-1.amazonaws.com', bucket: 'acme-shots', region: 'eu-west-1', pathStyle: false, keyTemplate: 'shots/{date}/{id}.{format}' });
      expect(created).to.not.have.property('credentials');
      expect(created.createdAt).to.be.instanceOf(Date);
      const read = await store.getDestination(account.id, 'archive');
      expect(read).to.deep.equal(created);
      expect(JSON.stringify(await store.listDestinations(account.id))).to.not.include(credentials.secretAccessKey);
      expect(await store.getDestinationCredentials(account.id, 'archive')).to.deep.equal(credentials);
    });

    it("keeps names unique within an account (Conflict) but not across accounts, and another account's destination does not exist for this one", async () => {
      const { store, account, other } = current();
      await store.createDestination(input(account.id));
      expect(await rejection(store.createDestination(input(account.id, { bucket: 'other' })))).to.be.instanceOf(Conflict);
      await store.createDestination(input(other.id, { bucket: 'theirs' }));
      expect((await store.getDestination(other.id, 'archive'))?.bucket).to.equal('theirs');
      expect((await store.getDestination(account.id, 'archive'))?.bucket).to.equal('acme-shots');
      expect(await store.getDestination(account.id, 'missing')).to.equal(null);
      expect(await store.getDestinationCredentials(account.id, 'missing')).to.equal(null);
      expect(await rejection(store.createDestination(input('acct_missing')))).to.be.instanceOf(NotFound);
    });

    it('lists an account\'s destinations by name', async () => {
      const { store, account, other } = current();
      await store.createDestination(input(account.id, { name: 'zeta' }));
      await store.createDestination(input(account.id, { name: 'alpha' }));
      await store.createDestination(input(other.id, { name: 'beta' }));
      expect((await store.listDestinations(account.id)).map((d) => d.name)).to.deep.equal(['alpha', 'zeta']);
    });

    it('updates the given fields, replaces the credentials only when given, and answers null for no such destination', async () => {
      const { store, account } = current();
      const created = await store.createDestination(input(account.id));
      const moved = await store.updateDestination(account.id, 'archive', { bucket: 'moved', pathStyle: true });
      expect(moved).to.deep.include({ bucket: 'moved', pathStyle: true, region: 'eu-west-1', keyTemplate: created.keyTemplate });
      expect(moved!.updatedAt.getTime()).to.be.at.least(created.updatedAt.getTime());
      expect(await store.getDestinationCredentials(account.id, 'archive')).to.deep.equal(credentials);
      const rotated = { accessKeyId: 'AKIAEXAMPLE000000002', secretAccessKey: 'a-new-secret' };
      await store.updateDestination(account.id, 'archive', { credentials: rotated });
      expect(await store.getDestinationCredentials(account.id, 'archive')).to.deep.equal(rotated);
      expect(await store.updateDestination(account.id, 'missing', { bucket: 'x' })).to.equal(null);
    });

    it('deletes a destination (true), then answers false', async () => {
      const { store, account } = current();
      await store.createDestination(input(account.id));
      expect(await store.deleteDestination(account.id, 'archive')).to.equal(true);
      expect(await store.getDestination(account.id, 'archive')).to.equal(null);
      expect(await store.deleteDestination(account.id, 'archive')).to.equal(false);
    });

    describe('owned by a Kubernetes Site (issue #43)', () => {
      const owner = { kind: 'Site' as const, namespace: 'shop', name: 'storefront', uid: 'uid-1' };
      const ref = { kind: 'Site' as const, namespace: 'shop', name: 'storefront' };

      it('creates it on the first upsert, then replaces its fields, name and credentials in place; unmanaged ones have managedBy null', async () => {
        const { store, account } = current();
        const plain = await store.createDestination(input(account.id, { name: 'plain' }));
        expect(plain.managedBy).to.equal(null);
        const created = await store.upsertManagedDestination({ ...input(account.id), managedBy: owner });
        expect(created.managedBy).to.deep.equal(owner);
        expect(await store.findDestinationByManagedBy(ref)).to.deep.equal(created);
        const rotated = { accessKeyId: 'AKIAEXAMPLE000000003', secretAccessKey: 'rotated' };
        const renamed = await store.upsertManagedDestination({ ...input(account.id, { name: 'shots', bucket: 'moved', credentials: rotated }), managedBy: { ...owner, uid: 'uid-2' } });
        expect(renamed).to.deep.include({ id: created.id, name: 'shots', bucket: 'moved', managedBy: { ...owner, uid: 'uid-2' } });
        expect(await store.getDestination(account.id, 'archive')).to.equal(null);
        expect(await store.getDestinationCredentials(account.id, 'shots')).to.deep.equal(rotated);
        expect((await store.listDestinations(account.id)).map((d) => d.name)).to.deep.equal(['plain', 'shots']);
      });

      it("refuses (Conflict) another account's owner and a name another destination of the account has", async () => {
        const { store, account, other } = current();
        await store.createDestination(input(account.id, { name: 'taken' }));
        expect(await rejection(store.upsertManagedDestination({ ...input(account.id, { name: 'taken' }), managedBy: owner }))).to.be.instanceOf(Conflict);
        expect(await store.findDestinationByManagedBy(ref)).to.equal(null);
        await store.upsertManagedDestination({ ...input(account.id), managedBy: owner });
        expect(await rejection(store.upsertManagedDestination({ ...input(account.id, { name: 'taken' }), managedBy: owner }))).to.be.instanceOf(Conflict);
        expect(await rejection(store.upsertManagedDestination({ ...input(other.id), managedBy: owner }))).to.be.instanceOf(Conflict);
        expect((await store.findDestinationByManagedBy(ref))?.name).to.equal('archive');
      });
    });
  });
}
