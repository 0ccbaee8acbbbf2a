import { createHash } from 'node:crypto';
import { AuthenticationV1Api, setHeaderMiddleware, type KubeConfig, type ObservableMiddleware } from '@kubernetes/client-node';
import type { Middleware } from 'koa';
import { looksLikeViewfinderSecret } from '../../../../lib/api-keys.ts';
import { Forbidden, ServiceUnavailable, Unauthorized } from '../../../../lib/errors.ts';
import { describeKubeError } from '../../../../lib/k8s/api-errors.ts';
import type { Logger } from '../../../../lib/logger.ts';
import type { OperatorAuthConfig } from '../config.ts';
import { recordAuthFailure } from '../metrics.ts';

/**
 * The operator's authentication (issue 20): it sends its Kubernetes ServiceAccount token as
 * `Authorization: Bearer`; the API asks the Kubernetes API who that is with a TokenReview for its
 * own audience, and admits only the ServiceAccounts it trusts (OPERATOR_SERVICE_ACCOUNTS). There is
 * no shared secret. Reviews are cached briefly, by the token's hash, so that a resync of many
 * objects does not become a storm of reviews.
 */

/** What a TokenReview says about a token: who it is, or null when it is not valid for our audience. */
export type ReviewedIdentity = { username: string } | null;

export interface TokenReviewer {
  review(token: string): Promise<ReviewedIdentity>;
}

/** Reviews waiting on the Kubernetes API at once; past it a caller gets 503 at once instead of another hanging request. */
export const MAX_REVIEWS_IN_FLIGHT = 32;

/**
 * A reviewer on the Kubernetes API (the API's own identity needs `create` on tokenreviews). A
 * review that has no answer within `timeoutMs` is aborted and the caller gets 503 with
 * Retry-After: the routes fail closed, and callers with no credentials cannot pile up requests
 * that wait for an API server that does not answer.
 */
export function kubeTokenReviewer(kubeConfig: KubeConfig, audience: string, timeoutMs = 3000): TokenReviewer {
  const api = kubeConfig.makeApiClient(AuthenticationV1Api);
  let inFlight = 0;
  return {
    async review(token) {
      if (inFlight >= MAX_REVIEWS_IN_FLIGHT) throw new ServiceUnavailable('Cannot review the token now: too many reviews are waiting for the Kubernetes API', 1);
      inFlight++;
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new Error(`the Kubernetes API did not answer within ${timeoutMs} ms`)), timeoutMs);
      const expired = new Promise<never>((_resolve, reject) => deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason as Error), { once: true }));
      let status;
      try {
        const call = api.createTokenReview(
          { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [audience] } } },
          { middleware: [abortingMiddleware(deadline.signal)], middlewareMergeStrategy: 'append' },
        );
        ({ status } = await Promise.race([call, expired]));
      } catch (err) {
        if (deadline.signal.aborted) throw new ServiceUnavailable(`Cannot review the token: ${(deadline.signal.reason as Error).message}`, 1);
        throw new ServiceUnavailable(`Cannot review the token: the Kubernetes API failed (${describeKubeError(err)})`, 1);
      } finally {
        clearTimeout(timer);
        inFlight--;
      }
      // A review that names audiences must include ours; one that names none was checked against ours.
      const audienceOk = status?.audiences === undefined || status.audiences.length === 0 || status.audiences.includes(audience);
      return status?.authenticated === true && audienceOk && status.user?.username ? { username: status.user.username } : null;
    },
  };
}

/**
 * Client middleware that gives the HTTP request the deadline's signal, so that the request itself
 * is aborted and nothing is left waiting. The client's middleware speaks its own Observable, which
 * it does not export; setHeaderMiddleware builds one, with a header the request already carries
 * (Accept: application/json), and this adds the signal to it.
 */
function abortingMiddleware(signal: AbortSignal): ObservableMiddleware {
  const base = setHeaderMiddleware('Accept', 'application/json');
  return {
    pre: (context) => {
      context.setSignal(signal);
      return base.pre(context);
    },
    post: (context) => base.post(context),
  };
}

/**
 * Caches reviews by the token's SHA-256 (never the token): admissions and refusals each for
 * `ttlMs`, in two maps of at most `maxEntries`, so that a flood of garbage tokens cannot push the
 * operator's admission out. Callers of one token while its review is on the way wait for that
 * review, so a flood of one garbage token costs one review and answers 401, not 503 once
 * MAX_REVIEWS_IN_FLIGHT is reached.
 */
export function cachedReviewer(inner: TokenReviewer, ttlMs: number, now: () => number = Date.now, maxEntries = 1000): TokenReviewer & { reviews: number } {
  const admitted = expiringAnswers(ttlMs, maxEntries, now);
  const refused = expiringAnswers(ttlMs, maxEntries, now);
  const pending = new Map<string, Promise<ReviewedIdentity>>();
  const self = {
    reviews: 0,
    async review(token: string) {
      const id = createHash('sha256').update(token).digest('hex');
      const hit = admitted.get(id) ?? refused.get(id);
      if (hit) return hit.identity;
      const waiting = pending.get(id);
      if (waiting) return waiting;
      self.reviews += 1;
      const answer = inner
        .review(token)
        .then((identity) => {
          (identity ? admitted : refused).set(id, identity);
          return identity;
        })
        .finally(() => pending.delete(id));
      pending.set(id, answer);
      return answer;
    },
  };
  return self;
}

function expiringAnswers(ttlMs: number, maxEntries: number, now: () => number) {
  const entries = new Map<string, { identity: ReviewedIdentity; expiresAt: number }>();
  return {
    get(id: string) {
      const hit = entries.get(id);
      if (hit === undefined || hit.expiresAt > now()) return hit;
      entries.delete(id);
      return undefined;
    },
    set(id: string, identity: ReviewedIdentity) {
      entries.delete(id);
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(id, { identity, expiresAt: now() + ttlMs });
    },
  };
}

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

export function requireOperator(reviewer: TokenReviewer | undefined, config: OperatorAuthConfig, logger: Logger): Middleware {
  const trusted = new Set(config.trustedServiceAccounts);
  return async (ctx, next) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers.authorization ?? '')?.[1];
    if (bearer === undefined) {
      recordAuthFailure('invalid_token');
      throw new Unauthorized('Invalid token: send the operator\'s Kubernetes ServiceAccount token as "Authorization: Bearer"');
    }
    // A customer's key sent here by mistake must not travel on to the Kubernetes API (and its audit log).
    if (looksLikeViewfinderSecret(bearer)) {
      recordAuthFailure('invalid_token');
      logger.info({ requestId: ctx.state.requestId }, 'Refused a Viewfinder key sent as an operator token, without reviewing it');
      throw new Unauthorized('Invalid token: this is a Viewfinder key, not a Kubernetes ServiceAccount token; it was not passed on');
    }
    if (!reviewer || trusted.size === 0) {
      recordAuthFailure('untrusted_service_account');
      throw new Forbidden('The API trusts no ServiceAccount for the operator routes: set OPERATOR_SERVICE_ACCOUNTS');
    }
    const identity = await reviewer.review(bearer);
    if (!identity) {
      recordAuthFailure('invalid_token');
      logger.info({ requestId: ctx.state.requestId }, 'Rejected an invalid operator token');
      throw new Unauthorized(`Invalid token: not a valid Kubernetes token for the audience "${config.audience}"`);
    }
    const match = SERVICE_ACCOUNT_USER.exec(identity.username);
    const serviceAccount = match ? `${match[1]}/${match[2]}` : undefined;
    if (serviceAccount === undefined || !trusted.has(serviceAccount)) {
      recordAuthFailure('untrusted_service_account');
      logger.warn({ requestId: ctx.state.requestId, user: identity.username }, 'Refused an untrusted caller of the operator routes');
      throw new Forbidden(`${serviceAccount ? `ServiceAccount ${serviceAccount}` : `User ${identity.username}`} is not trusted to manage Kubernetes-owned objects`);
    }
    ctx.state.operator = serviceAccount;
    await next();
  };
}
