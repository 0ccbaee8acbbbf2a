import { Schema, type Connection } from 'mongoose';
import { NotFound } from '../errors.ts';
import { duplicateEmail, newId } from './rules.ts';
import { normalizeEmail, type Session, type User, type UserStore } from './users.ts';

/**
 * Users and sessions in MongoDB. The unique index on email decides a race between two creates;
 * deleting a user removes the user first, then their sessions: between the two, a session whose
 * user is gone is already refused (services/api/src/dashboard/sessions.ts reads the user each time).
 */
interface UserDoc {
  _id: string;
  accountId: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
}
interface SessionDoc {
  _id: string;
  userId: string;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
}

const userSchema = new Schema<UserDoc>(
  {
    _id: String,
    accountId: { type: String, required: true, index: true },
    email: { type: String, required: true, unique: true },
    passwordHash: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
const sessionSchema = new Schema<SessionDoc>(
  {
    _id: String,
    userId: { type: String, required: true, index: true },
    csrfToken: { type: String, required: true },
    createdAt: { type: Date, required: true },
    lastSeenAt: { type: Date, required: true },
  },
  { versionKey: false },
);

export async function mongoUserStore(connection: Connection, accountExists: (id: string) => Promise<boolean>): Promise<UserStore> {
  const Users = connection.model<UserDoc>('User', userSchema, 'users');
  const Sessions = connection.model<SessionDoc>('Session', sessionSchema, 'sessions');
  await Promise.all([Users.createIndexes(), Sessions.createIndexes()]);

  return {
    async createUser(input) {
      const email = normalizeEmail(input.email);
      if (!(await accountExists(input.accountId))) throw new NotFound(`Account ${input.accountId} not found`);
      try {
        const created = await Users.create({ _id: newId('user'), accountId: input.accountId, email, passwordHash: input.passwordHash, createdAt: new Date() });
        return toUser(created.toObject()) as User;
      } catch (err) {
        if ((err as { code?: number })?.code === 11000) throw duplicateEmail(email);
        throw err;
      }
    },
    getUser: async (id) => toUser(await Users.findById(id).lean()),
    findUserByEmail: async (email) => toUser(await Users.findOne({ email: normalizeEmail(email) }).lean()),
    listUsers: async (accountId) =>
      (await Users.find(accountId === undefined ? {} : { accountId }).sort({ createdAt: 1, _id: 1 }).lean()).map((doc) => toUser(doc) as User),
    setUserPassword: async (id, passwordHash) => toUser(await Users.findByIdAndUpdate(id, { $set: { passwordHash } }, { returnDocument: 'after' }).lean()),
    async deleteUser(id) {
      const { deletedCount } = await Users.deleteOne({ _id: id });
      await Sessions.deleteMany({ userId: id });
      return deletedCount > 0;
    },

    async createSession(session) {
      await Sessions.create({ _id: session.idHash, userId: session.userId, csrfToken: session.csrfToken, createdAt: session.createdAt, lastSeenAt: session.lastSeenAt });
      return session;
    },
    getSession: async (idHash) => toSession(await Sessions.findById(idHash).lean()),
    async touchSession(idHash, at) {
      await Sessions.updateOne({ _id: idHash }, { $set: { lastSeenAt: at } });
    },
    deleteSession: async (idHash) => (await Sessions.deleteOne({ _id: idHash })).deletedCount > 0,
    deleteUserSessions: async (userId) => (await Sessions.deleteMany({ userId })).deletedCount,
    deleteExpiredSessions: async (lastSeenBefore, createdBefore) =>
      (await Sessions.deleteMany({ $or: [{ lastSeenAt: { $lt: lastSeenBefore } }, { createdAt: { $lt: createdBefore } }] })).deletedCount,
  };
}

function toUser(doc: UserDoc | null): User | null {
  return doc && { id: doc._id, accountId: doc.accountId, email: doc.email, passwordHash: doc.passwordHash, createdAt: doc.createdAt };
}

function toSession(doc: SessionDoc | null): Session | null {
  return doc && { idHash: doc._id, userId: doc.userId, csrfToken: doc.csrfToken, createdAt: doc.createdAt, lastSeenAt: doc.lastSeenAt };
}
