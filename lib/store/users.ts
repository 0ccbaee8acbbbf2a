/**
 * Dashboard users and their sign-in sessions: the part of the store port that issue 13's dashboard
 * uses. Sessions live in the store so that every API replica sees the same ones.
 *
 * The store keeps what it is given: a password's scrypt hash (lib/passwords.ts) and a session's
 * SHA-256 id hash. Expiry (idle and absolute) is decided above it (services/api/src/dashboard/sessions.ts),
 * from the two timestamps a session carries.
 */

export interface User {
  id: string;
  accountId: string;
  /** Lower-cased and trimmed; unique across the whole store. */
  email: string;
  /** lib/passwords.ts's encoded scrypt hash; never leaves the server. */
  passwordHash: string;
  createdAt: Date;
}

export interface NewUser {
  accountId: string;
  email: string;
  passwordHash: string;
}

export interface Session {
  /** SHA-256 (hex) of the opaque token in the browser's cookie: a copy of the store holds no usable session. */
  idHash: string;
  userId: string;
  /** The synchronizer token every state-changing form of this session must carry. */
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
}

export interface UserStore {
  /** Conflict when the email is taken; NotFound when the account does not exist. */
  createUser(input: NewUser): Promise<User>;
  getUser(id: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  /** Every user, or one account's. */
  listUsers(accountId?: string): Promise<User[]>;
  setUserPassword(id: string, passwordHash: string): Promise<User | null>;
  /** Deletes the user and every session of theirs, together. */
  deleteUser(id: string): Promise<boolean>;

  createSession(session: Session): Promise<Session>;
  getSession(idHash: string): Promise<Session | null>;
  touchSession(idHash: string, at: Date): Promise<void>;
  deleteSession(idHash: string): Promise<boolean>;
  /** Ends every session of a user (after a password reset); returns how many there were. */
  deleteUserSessions(userId: string): Promise<number>;
  /** Removes sessions last seen before `lastSeenBefore` or created before `createdBefore`: the expired ones nobody came back to. */
  deleteExpiredSessions(lastSeenBefore: Date, createdBefore: Date): Promise<number>;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
