import { expect } from 'chai';
import { Conflict, NotFound } from '../../lib/errors.ts';
import type { Account, Store } from '../../lib/store/store.ts';
import type { Session } from '../../lib/store/users.ts';

/** Users and sessions: part of the store conformance suite (conformance.ts calls this inside its own setup). */
export function userStoreConformance(current: () => { store: Store; account: Account; other: Account }): void {
  const hash = 'scrypt$test';
  const session = (userId: string, idHash: string, at = new Date()): Session => ({ idHash, userId, csrfToken: `csrf-${idHash}`, createdAt: at, lastSeenAt: at });

  describe('users', () => {
    it('creates a user with a normalized email and finds it by id and by email in any case', async () => {
      const { store, account } = current();
      const user = await store.createUser({ accountId: account.id, email: '  Ada@Example.COM ', passwordHash: hash });
      expect(user.id).to.match(/^user_[0-9a-f]{24}$/);
      expect(user).to.deep.include({ accountId: account.id, email: 'ada@example.com', passwordHash: hash });
      expect(await store.getUser(user.id)).to.deep.equal(user);
      expect((await store.findUserByEmail('ADA@example.com'))?.id).to.equal(user.id);
      expect(await store.findUserByEmail('nobody@example.com')).to.equal(null);
      expect(await store.getUser('user_missing')).to.equal(null);
    });

    it('refuses a second user with the same email, in any account, and a user of no account', async () => {
      const { store, account, other } = current();
      await store.createUser({ accountId: account.id, email: 'ada@example.com', passwordHash: hash });
      const duplicate = await store.createUser({ accountId: other.id, email: 'ADA@example.com', passwordHash: hash }).catch((err: unknown) => err);
      expect(duplicate).to.be.instanceOf(Conflict);
      const orphan = await store.createUser({ accountId: 'acct_missing', email: 'x@example.com', passwordHash: hash }).catch((err: unknown) => err);
      expect(orphan).to.be.instanceOf(NotFound);
    });

    it('lists every user, or one account\'s', async () => {
      const { store, account, other } = current();
      const mine = await store.createUser({ accountId: account.id, email: 'a@example.com', passwordHash: hash });
      const theirs = await store.createUser({ accountId: other.id, email: 'b@example.com', passwordHash: hash });
      expect((await store.listUsers(account.id)).map((u) => u.id)).to.deep.equal([mine.id]);
      expect((await store.listUsers()).map((u) => u.id)).to.include.members([mine.id, theirs.id]);
    });

    it('replaces the password hash, and answers null for an unknown user', async () => {
      const { store, account } = current();
      const user = await store.createUser({ accountId: account.id, email: 'a@example.com', passwordHash: hash });
      expect((await store.setUserPassword(user.id, 'scrypt$new'))?.passwordHash).to.equal('scrypt$new');
      expect((await store.getUser(user.id))?.passwordHash).to.equal('scrypt$new');
      expect(await store.setUserPassword('user_missing', 'x')).to.equal(null);
    });

    it('deletes a user together with their sessions', async () => {
      const { store, account } = current();
      const user = await store.createUser({ accountId: account.id, email: 'a@example.com', passwordHash: hash });
      await store.createSession(session(user.id, 'h1'));
      expect(await store.deleteUser(user.id)).to.equal(true);
      expect(await store.getUser(user.id)).to.equal(null);
      expect(await store.getSession('h1')).to.equal(null);
      expect(await store.deleteUser(user.id)).to.equal(false);
    });
  });

  describe('sessions', () => {
    it('stores a session by its id hash and reads it back, and null for an unknown one', async () => {
      const { store, account } = current();
      const user = await store.createUser({ accountId: account.id, email: 'a@example.com', passwordHash: hash });
      const created = session(user.id, 'h1', new Date('2026-01-01T00:00:00.000Z'));
      await store.createSession(created);
      expect(await store.getSession('h1')).to.deep.equal(created);
      expect(await store.getSession('h2')).to.equal(null);
    });

    it('moves lastSeenAt on touch and leaves createdAt', async () => {
      const { store, account } = current();
      const user = await store.createUser({ accountId: account.id, email: 'a@example.com', passwordHash: hash });
      const at = new Date('2026-01-01T00:00:00.000Z');
      await store.createSession(session(user.id, 'h1', at));
      const later = new Date('2026-01-01T00:10:00.000Z');
      await store.touchSession('h1', later);
      const read = await store.getSession('h1');
      expect(read?.lastSeenAt.toISOString()).to.equal(later.toISOString());
      expect(read?.createdAt.toISOString()).to.equal(at.toISOString());
    });

    it('deletes one session, or every session of a user', async () => {
      const { store, account } = current();
      const ada = await store.createUser({ accountId: account.id, email: 'a@example.com', passwordHash: hash });
      const bob = await store.createUser({ accountId: account.id, email: 'b@example.com', passwordHash: hash });
      await store.createSession(session(ada.id, 'a1'));
      await store.createSession(session(ada.id, 'a2'));
      await store.createSession(session(bob.id, 'b1'));
      expect(await store.deleteSession('a1')).to.equal(true);
      expect(await store.deleteSession('a1')).to.equal(false);
      await store.createSession(session(ada.id, 'a3'));
      expect(await store.deleteUserSessions(ada.id)).to.equal(2);
      expect(await store.getSession('a2')).to.equal(null);
      expect(await store.getSession('b1')).to.not.equal(null);
    });

    it('removes the sessions idle since a time or created before another, and keeps the rest', async () => {
      const { store, account } = current();
      const user = await store.createUser({ accountId: account.id, email: 'a@example.com', passwordHash: hash });
      const at = (iso: string) => new Date(`2026-01-01T${iso}:00.000Z`);
      await store.createSession({ ...session(user.id, 'idle', at('00:00')), lastSeenAt: at('01:00') });
      await store.createSession({ ...session(user.id, 'old', at('00:00')), lastSeenAt: at('05:00') });
      await store.createSession({ ...session(user.id, 'live', at('03:00')), lastSeenAt: at('05:00') });
      expect(await store.deleteExpiredSessions(at('02:00'), at('01:00'))).to.equal(2);
      expect(await store.getSession('idle')).to.equal(null);
      expect(await store.getSession('old')).to.equal(null);
      expect(await store.getSession('live')).to.not.equal(null);
    });
  });
}
