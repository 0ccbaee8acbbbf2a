import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { NotFound } from '../errors.ts';
import { duplicateEmail, newId } from './rules.ts';
import { normalizeEmail, type Session, type User, type UserStore } from './users.ts';

/**
 * Users and sessions in the embedded store. Their tables are created here, idempotently, rather
 * than in sqlite.ts's versioned schema, so that they arrive in an existing DATA_DIR without a
 * migration step. Deleting a user removes their sessions through the foreign key.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS users_by_account ON users(account_id);
CREATE TABLE IF NOT EXISTS sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions(user_id);
`;

type Row = Record<string, SQLInputValue>;

export function sqliteUserStore(db: DatabaseSync, transaction: <T>(work: () => T) => T): UserStore {
  transaction(() => db.exec(SCHEMA));
  const one = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).get(...params) as Row | undefined;
  const run = (sql: string, ...params: SQLInputValue[]) => db.prepare(sql).run(...params);
  const getUser = (id: string) => toUser(one('SELECT * FROM users WHERE id = ?', id));

  return {
    async createUser(input) {
      const email = normalizeEmail(input.email);
      return transaction(() => {
        if (!one('SELECT 1 FROM accounts WHERE id = ?', input.accountId)) throw new NotFound(`Account ${input.accountId} not found`);
        if (one('SELECT 1 FROM users WHERE email = ?', email)) throw duplicateEmail(email);
        const id = newId('user');
        run('INSERT INTO users (id, account_id, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?)', id, input.accountId, email, input.passwordHash, new Date().toISOString());
        return getUser(id) as User;
      });
    },
    getUser: async (id) => getUser(id),
    findUserByEmail: async (email) => toUser(one('SELECT * FROM users WHERE email = ?', normalizeEmail(email))),
    async listUsers(accountId) {
      const rows = (
        accountId === undefined
          ? db.prepare('SELECT * FROM users ORDER BY created_at, id').all()
          : db.prepare('SELECT * FROM users WHERE account_id = ? ORDER BY created_at, id').all(accountId)
      ) as Row[];
      return rows.map((row) => toUser(row) as User);
    },
    async setUserPassword(id, passwordHash) {
      run('UPDATE users SET password_hash = ? WHERE id = ?', passwordHash, id);
      return getUser(id);
    },
    async deleteUser(id) {
      return run('DELETE FROM users WHERE id = ?', id).changes > 0;
    },

    async createSession(session) {
      run(
        'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)',
        session.idHash,
        session.userId,
        session.csrfToken,
        session.createdAt.toISOString(),
        session.lastSeenAt.toISOString(),
      );
      return session;
    },
    getSession: async (idHash) => toSession(one('SELECT * FROM sessions WHERE id_hash = ?', idHash)),
    async touchSession(idHash, at) {
      run('UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?', at.toISOString(), idHash);
    },
    async deleteSession(idHash) {
      return run('DELETE FROM sessions WHERE id_hash = ?', idHash).changes > 0;
    },
    async deleteUserSessions(userId) {
      return Number(run('DELETE FROM sessions WHERE user_id = ?', userId).changes);
    },
    async deleteExpiredSessions(lastSeenBefore, createdBefore) {
      return Number(run('DELETE FROM sessions WHERE last_seen_at < ? OR created_at < ?', lastSeenBefore.toISOString(), createdBefore.toISOString()).changes);
    },
  };
}

function toUser(row: Row | undefined): User | null {
  if (row === undefined) return null;
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    email: String(row.email),
    passwordHash: String(row.password_hash),
    createdAt: new Date(String(row.created_at)),
  };
}

function toSession(row: Row | undefined): Session | null {
  if (row === undefined) return null;
  return {
    idHash: String(row.id_hash),
    userId: String(row.user_id),
    csrfToken: String(row.csrf_token),
    createdAt: new Date(String(row.created_at)),
    lastSeenAt: new Date(String(row.last_seen_at)),
  };
}
