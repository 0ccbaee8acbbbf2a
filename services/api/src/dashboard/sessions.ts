import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { Account, Store } from '../../../../lib/store/store.ts';
import type { Session, User } from '../../../../lib/store/users.ts';
import type { DashboardConfig } from './config.ts';

/**
 * Dashboard sessions. The browser holds only an opaque random token in an HttpOnly, SameSite=Lax
 * cookie (Secure when the request came over TLS, which behind a proxy Koa knows only with
 * TRUST_PROXY). The store holds the token's SHA-256, so a copy of the store opens no session.
 * A session ends when idle for sessionIdleMs, sessionMaxMs after sign-in, or at sign-out.
 */
export const SESSION_COOKIE = 'vf_session';
const COOKIE_PATH = '/dashboard';
/** lastSeenAt is kept to the minute: a write on every page view would only load the store. */
const TOUCH_RESOLUTION_MS = 60_000;

export interface SignedIn {
  session: Session;
  user: User;
  account: Account;
}

export type Clock = () => Date;

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function sessionManager(store: Store, config: DashboardConfig, clock: Clock) {
  const expired = (session: Session, now: Date) =>
    now.getTime() - session.lastSeenAt.getTime() >= config.sessionIdleMs || now.getTime() - session.createdAt.getTime() >= config.sessionMaxMs;

  const clearCookie = (ctx: Context) => ctx.cookies.set(SESSION_COOKIE, null, { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure: ctx.secure });

  return {
    async start(ctx: Context, user: User): Promise<Session> {
      const token = randomToken();
      const now = clock();
      // Expired sessions that nobody came back to are swept here, at the rare moment a session begins.
      await store.deleteExpiredSessions(new Date(now.getTime() - config.sessionIdleMs), new Date(now.getTime() - config.sessionMaxMs));
      const session = await store.createSession({ idHash: hashToken(token), userId: user.id, csrfToken: randomToken(), createdAt: now, lastSeenAt: now });
      ctx.cookies.set(SESSION_COOKIE, token, { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure: ctx.secure, maxAge: config.sessionMaxMs, overwrite: true });
      return session;
    },

    /** The signed-in user of this request, or null (an expired session is deleted on the way). */
    async current(ctx: Context): Promise<SignedIn | null> {
      const token = ctx.cookies.get(SESSION_COOKIE);
      if (!token) return null;
      const session = await store.getSession(hashToken(token));
      if (!session) return null;
      const now = clock();
      if (expired(session, now)) {
        await store.deleteSession(session.idHash);
        clearCookie(ctx);
        return null;
      }
      // The user and account are read each time: a deleted user is signed out on the next request.
      const user = await store.getUser(session.userId);
      const account = user && (await store.getAccount(user.accountId));
      if (!user || !account) return null;
      if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_RESOLUTION_MS) await store.touchSession(session.idHash, now);
      return { session, user, account };
    },

    async end(ctx: Context, session: Session): Promise<void> {
      await store.deleteSession(session.idHash);
      clearCookie(ctx);
    },
  };
}

export type SessionManager = ReturnType<typeof sessionManager>;
