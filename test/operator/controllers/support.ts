import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../../../lib/store/sqlite.ts';
import type { Account, Store } from '../../../lib/store/store.ts';
import type { ControllerDeps } from '../../../operator/src/controllers/common.ts';
import { KubeClient } from '../../../operator/src/k8s/client.ts';
import { EventRecorder } from '../../../operator/src/k8s/events.ts';
import type { FakeKubeApiServer } from '../../support/fake-kube-apiserver.ts';
import { silentLogger } from '../../support/harness.ts';
import { Resources, startFakeTarget, type KubeTarget } from '../support.ts';

/** One reconcile at a time, called directly: the fake API server, an embedded store, a fixed clock. */
export interface ReconcileBench {
  deps: ControllerDeps;
  fake: FakeKubeApiServer;
  kube: Resources;
  store: Store;
  account: Account;
  namespace: string;
  close(): Promise<void>;
}

export async function startReconcileBench(): Promise<ReconcileBench> {
  const target: KubeTarget = await startFakeTarget();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-reconcile-'));
  const store = openSqliteStore({ dataDir });
  const account = await store.createAccount({ name: 'Acme' });
  const client = new KubeClient(target.kubeConfig);
  const deps: ControllerDeps = { kube: client, store, events: new EventRecorder(client, silentLogger), logger: silentLogger, now: () => new Date('2026-01-01T00:00:00Z') };
  return {
    deps,
    fake: target.fake as FakeKubeApiServer,
    kube: new Resources(target),
    store,
    account,
    namespace: target.namespace,
    async close() {
      await store.close();
      await target.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
