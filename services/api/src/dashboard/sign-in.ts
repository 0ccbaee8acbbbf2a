import type { Context, Middleware } from 'koa';
import { TooManyRequests } from '../../../../lib/errors.ts';
import { decoyHash, MAX_PASSWORD_LENGTH, verifyPassword } from '../../../../lib/passwords.ts';
import { normalizeEmail } from '../../../../lib/store/users.ts';
import type { DashboardDeps } from './deps.ts';
import { csrfField, formError, textField, type FieldErrors } from './fields.ts';
import { checkCsrf, field } from './forms.ts';
import { html } from './html.ts';
import { sendPage } from './layout.ts';
import { randomToken } from './sessions.ts';

/**
 * Sign-in and sign-out. Before there is a session, the sign-in form's CSRF token is a
 * double-submit pair: a random value in a SameSite=Strict cookie that only this path receives,
 * repeated in the form. Attempts are limited per email and per client address through the API's
 * rate limiter, and every refusal says the same thing, so nothing tells whether an email exists.
 */
const SIGN_IN_COOKIE = 'vf_sign_in';
const SIGN_IN_PATH = '/dashboard/sign-in';
export const WRONG_CREDENTIALS = 'The email or the password is incorrect.';

/** Where to go after signing in: only a dashboard path, never another site. */
export function safeNext(next: string): string {
  return /^\/dashboard(\/[\w/-]*)?$/.test(next) ? next : '/dashboard/sites';
}

function signInToken(ctx: Context): string {
  const existing = ctx.cookies.get(SIGN_IN_COOKIE);
  if (existing && /^[\w-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  ctx.cookies.set(SIGN_IN_COOKIE, token, { path: SIGN_IN_PATH, httpOnly: true, sameSite: 'strict', secure: ctx.secure, overwrite: true });
  return token;
}

function signInPage(ctx: Context, options: { email?: string; next: string; errors?: FieldErrors; status?: number }): void {
  const errors = options.errors ?? {};
  sendPage(
    ctx,
    'Sign in',
    html`<form class="card narrow" method="post" action="${SIGN_IN_PATH}" novalidate>
      ${formError(errors)}
      ${csrfField(signInToken(ctx))}
      <input type="hidden" name="next" value="${options.next}">
      ${textField({ label: 'Email', name: 'email', type: 'email', autocomplete: 'username', value: options.email ?? '', required: true, errors })}
      ${textField({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, errors })}
      <button type="submit" class="primary">Sign in</button>
    </form>`,
    { status: options.status ?? 200 },
  );
}

export function showSignIn(): Middleware {
  return async (ctx) => {
    signInPage(ctx, { next: safeNext(String(ctx.query.next ?? '')) });
  };
}

export const SIGN_IN_FIELDS = ['email', 'password', 'next'] as const;

export function signIn(deps: DashboardDeps): Middleware {
  const { store, limiter, sessions, config } = deps;
  return async (ctx) => {
    const token = ctx.cookies.get(SIGN_IN_COOKIE);
    checkCsrf(ctx, token ?? '');
    const email = normalizeEmail(field(ctx, 'email'));
    const password = field(ctx, 'password');
    const next = safeNext(field(ctx, 'next'));
    if (!email || !password) {
      signInPage(ctx, { email, next, status: 400, errors: { ...(!email ? { email: 'Enter your email.' } : {}), ...(!password ? { password: 'Enter your password.' } : {}) } });
      return;
    }
    try {
      await limiter.consume(ctx, `sign-in:address:${ctx.ip}`, config.signInLimitPerAddress);
      await limiter.consume(ctx, `sign-in:email:${email}`, config.signInLimitPerAccount);
    } catch (err) {
      if (!(err instanceof TooManyRequests)) throw err;
      ctx.set('Retry-After', err.headers['Retry-After'] ?? '60');
      signInPage(ctx, { email, next, status: 429, errors: { form: `Too many sign-in attempts. Try again in ${err.headers['Retry-After'] ?? 60} seconds.` } });
      return;
    }
    const user = await store.findUserByEmail(email);
    // An unknown email still costs one scrypt, so the answer's timing does not tell it apart.
    const valid = password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(password, user?.passwordHash ?? (await decoyHash())));
    if (!user || !valid) {
      deps.logger.info({ requestId: ctx.state.requestId }, 'Refused a dashboard sign-in');
      signInPage(ctx, { email, next, status: 401, errors: { form: WRONG_CREDENTIALS } });
      return;
    }
    // A new sign-in always gets a new session id: an id planted before sign-in is worth nothing after it.
    const previous = await sessions.current(ctx);
    if (previous) await sessions.end(ctx, previous.session);
    await sessions.start(ctx, user);
    deps.logger.info({ requestId: ctx.state.requestId, userId: user.id }, 'Signed a user in to the dashboard');
    ctx.status = 303;
    ctx.redirect(next);
  };
}

export function signOut(deps: DashboardDeps): Middleware {
  return async (ctx) => {
    const signedIn = await deps.sessions.current(ctx);
    if (signedIn) {
      checkCsrf(ctx, signedIn.session.csrfToken);
      await deps.sessions.end(ctx, signedIn.session);
    }
    ctx.status = 303;
    ctx.redirect(SIGN_IN_PATH);
  };
}
