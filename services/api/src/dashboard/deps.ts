import type { Context, Middleware } from 'koa';
import { Forbidden } from '../../../../lib/errors.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { accountOperations, type AccountOperations } from '../../../../lib/management.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { normalizeEmail } from '../../../../lib/store/users.ts';
import type { Renderer } from '../../../renderer/src/renderer.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { ResultCache } from '../result-cache/result-cache.ts';
import type { CaptureJobs } from '../captures/service.ts';
import type { MonitorService } from '../monitors/service.ts';
import type { StorageDelivery } from '../storage/delivery.ts';
import { destinationOperations } from '../storage/destinations.ts';
import type { DashboardConfig } from './config.ts';
import { checkCsrf, formBody } from './forms.ts';
import type { HtmlValue } from './html.ts';
import { sendPage, type Section } from './layout.ts';
import type { SessionManager, SignedIn } from './sessions.ts';
import { proxiedEmail } from './sso.ts';

export interface DashboardDeps {
  store: Store;
  renderer: Renderer;
  limiter: RateLimiter;
  logger: Logger;
  /** Try it's cacheTtl uses the API's result cache; without one, every capture renders. */
  resultCache?: ResultCache | undefined;
  config: DashboardConfig;
  sessions: SessionManager;
  /** The Jobs page lists asynchronous captures; absent when ASYNC_CAPTURES is off. */
  captures?: CaptureJobs | undefined;
  /** The Monitors page; absent when page monitors do not run on this API. */
  monitors?: MonitorService | undefined;
  /** The Storage page registers destinations through it (their endpoints pass the guard). */
  storage: StorageDelivery;
  bodyLimitBytes: number;
}

/** What a signed-in page handler works with: the session's account, through the management operations. */
export interface PageContext {
  ctx: Context;
  signedIn: SignedIn;
  ops: AccountOperations;
  /** The account's storage destinations, through the management API's operations. */
  destinations: ReturnType<typeof destinationOperations>;
  csrfToken: string;
  /** PUBLIC_BASE_URL: absolute links (signed render links) start with it. */
  publicBaseUrl: string;
  /** Sends a page with the signed-in shell (navigation, sign-out). */
  send(title: string, main: HtmlValue, status?: number): void;
  /** POST → 303 → GET. */
  redirect(path: string): void;
}

export type PageHandler = (page: PageContext) => Promise<void>;

/**
 * Wraps a page: the request must belong to a live session (or a trusted SSO proxy's user), else a
 * GET goes to sign-in and comes back afterwards; a POST must carry the session's CSRF token, and
 * no field but `fields`.
 */
export function signedInPage(deps: DashboardDeps, method: 'GET' | 'POST', section: Section, handler: PageHandler, fields: readonly string[] = []): Middleware[] {
  const page: Middleware = async (ctx, next) => {
    const signedIn = await identify(deps, ctx);
    if (!signedIn) {
      ctx.status = 303;
      ctx.redirect(method === 'GET' ? `/dashboard/sign-in?next=${encodeURIComponent(ctx.path)}` : '/dashboard/sign-in');
      return;
    }
    ctx.state.signedIn = signedIn;
    await next();
  };
  const csrf: Middleware = (ctx, next) => {
    checkCsrf(ctx, (ctx.state.signedIn as SignedIn).session.csrfToken);
    return next();
  };
  const handle: Middleware = (ctx) => {
    const signedIn = ctx.state.signedIn as SignedIn;
    const csrfToken = signedIn.session.csrfToken;
    return handler({
      ctx,
      signedIn,
      csrfToken,
      publicBaseUrl: deps.config.publicBaseUrl,
      ops: accountOperations(deps.store, signedIn.account.id),
      destinations: destinationOperations(deps.store, deps.storage, signedIn.account.id),
      send: (title, main, status) => sendPage(ctx, title, main, { status, shell: { email: signedIn.user.email, accountName: signedIn.account.name, csrfToken, section } }),
      redirect: (path) => {
        ctx.status = 303;
        ctx.redirect(path);
      },
    });
  };
  return method === 'POST' ? [page, ...formBody(deps.bodyLimitBytes, fields), csrf, handle] : [page, handle];
}

/** The session's user; with single sign-on, the proxy's user, whose session is started or replaced as needed. */
async function identify(deps: DashboardDeps, ctx: Context): Promise<SignedIn | null> {
  const current = await deps.sessions.current(ctx);
  const sso = deps.config.sso;
  const email = sso && proxiedEmail(ctx, sso);
  if (!email) return current;
  if (current && current.user.email === normalizeEmail(email)) return current;
  if (current) await deps.sessions.end(ctx, current.session);
  const user = await deps.store.findUserByEmail(email);
  const account = user && (await deps.store.getAccount(user.accountId));
  if (!user || !account) {
    throw new Forbidden(`Single sign-on: no Viewfinder user has the email ${normalizeEmail(email)}; an administrator adds one with viewfinder users create`);
  }
  const session = await deps.sessions.start(ctx, user);
  deps.logger.info({ requestId: ctx.state.requestId, userId: user.id }, 'Signed a user in to the dashboard through the SSO proxy');
  return { session, user, account };
}
