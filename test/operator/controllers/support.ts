import type { Account, Store } from '../../../lib/store/store.ts';
import { ApiClient } from '../../../operator/src/api/client.ts';
import { tokenRequestSource } from '../../../operator/src/api/token.ts';
import type { ControllerDeps } from '../../../operator/src/controllers/common.ts';
import { KubeClient } from '../../../operator/src/k8s/client.ts';
import { EventRecorder } from '../../../operator/src/k8s/events.ts';
import type { FakeKubeApiServer } from '../../support/fake-kube-apiserver.ts';
import { silentLogger } from '../../support/harness.ts';
import { OPERATOR_SERVICE_ACCOUNT, Resources, startFakeTarget, startHostedApi, type HostedApi, type KubeTarget } from '../support.ts';

/**
 * One reconcile at a time, called directly: the fake API server, the hosted API on an embedded
 * store (reached over HTTP with a ServiceAccount token, as the operator does), a fixed clock.
 * `store` is the API's, for assertions and for changing things behind the operator's back.
 */
export interface ReconcileBench {
  deps: ControllerDeps;
  fake: FakeKubeApiServer;
  kube: Resources;
  api: HostedApi;
  store: Store;
  account: Account;
  namespace: string;
  close(): Promise<void>;
}

export async function startReconcileBench(options: Parameters<typeof startHostedApi>[1] = {}): Promise<ReconcileBench> {
  const target: KubeTarget = await startFakeTarget();
  const api = await startHostedApi(target, options);
  const account = await api.store.createAccount({ name: 'Acme' });
  const client = new KubeClient(target.kubeConfig);
  const apiClient = new ApiClient({
    baseUrl: new URL(api.url),
    tokens: tokenRequestSource(target.kubeConfig, { namespace: target.namespace, name: OPERATOR_SERVICE_ACCOUNT }, 'viewfinder-api'),
    timeoutMs: 10_000,
  });
  const deps: ControllerDeps = { kube: client, api: apiClient, events: new EventRecorder(client, silentLogger), logger: silentLogger, now: () => new Date('2026-01-01T00:00:00Z') };
  return {
    deps,
    fake: target.fake as FakeKubeApiServer,
    kube: new Resources(target),
    api,
    store: api.store,
    account,
    namespace: target.namespace,
    async close() {
      await api.close();
      await target.close();
    },
  };
}
