import { readFile } from 'node:fs/promises';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

/**
 * Where the operator's ServiceAccount token comes from (issue 20). In a pod: the projected token
 * file that the chart mounts with the API's audience (the kubelet rotates it, so it is read again
 * every minute). Outside a cluster (tests, a laptop): the TokenRequest API, as
 * `kubectl create token` does, for the configured ServiceAccount with the current KUBECONFIG.
 */
export interface TokenSource {
  token(): Promise<string>;
  /** Forgets the cached token, e.g. after the API answered 401 to it. */
  invalidate(): void;
  describe(): string;
}

const FILE_RELOAD_MS = 60_000;

export function fileTokenSource(path: string, now: () => number = Date.now): TokenSource {
  let cached: { token: string; readAt: number } | undefined;
  return {
    async token() {
      if (cached && now() - cached.readAt < FILE_RELOAD_MS) return cached.token;
      const token = (await readFile(path, 'utf8')).trim();
      if (token === '') throw new Error(`The token file ${path} is empty`);
      cached = { token, readAt: now() };
      return token;
    },
    invalidate() {
      cached = undefined;
    },
    describe: () => `the projected token file ${path}`,
  };
}

/** Tokens are asked for this long and renewed once 80% of it has passed. */
const REQUESTED_SECONDS = 3600;

export function tokenRequestSource(kubeConfig: KubeConfig, serviceAccount: { namespace: string; name: string }, audience: string, now: () => number = Date.now): TokenSource {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const request = async () => {
    const answer = await core.createNamespacedServiceAccountToken({
      namespace: serviceAccount.namespace,
      name: serviceAccount.name,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [audience], expirationSeconds: REQUESTED_SECONDS } },
    });
    const token = answer.status?.token;
    if (!token) throw new Error(`The TokenRequest for ServiceAccount ${serviceAccount.namespace}/${serviceAccount.name} returned no token`);
    const expires = answer.status?.expirationTimestamp ? new Date(answer.status.expirationTimestamp).getTime() : now() + REQUESTED_SECONDS * 1000;
    cached = { token, renewAt: now() + (expires - now()) * 0.8 };
    return token;
  };
  return {
    async token() {
      if (cached && now() < cached.renewAt) return cached.token;
      // One request at a time: the Site and ApiKey workers may both need a token at once.
      pending ??= request().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate() {
      cached = undefined;
    },
    describe: () => `TokenRequests for ServiceAccount ${serviceAccount.namespace}/${serviceAccount.name}`,
  };
}
