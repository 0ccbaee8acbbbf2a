/**
 * Namespaces that tests create on a real cluster, and their removal: a test's namespace is gone,
 * not Terminating, when the test ends.
 */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { httpStatusOf } from '../../lib/k8s/api-errors.ts';
import { GROUP, PLURALS, VERSION } from '../../operator/src/resources.ts';

/** A fresh name under viewfinder-test-, so that a leftover is recognisable as a test's. */
export const testNamespaceName = (suffix = ''): string => `viewfinder-test-${randomBytes(4).toString('hex')}${suffix}`;

export async function createNamespace(kubeConfig: KubeConfig, name: string): Promise<void> {
  await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
}

/**
 * Deletes a namespace and waits until the namespace controller has removed it. Sites and ApiKeys
 * carry the operator's viewfinder.dev/cleanup finalizer, which only a running operator removes:
 * once the test's operator has stopped they would hold the namespace in Terminating for ever, so
 * their finalizers are cleared first (the store they pointed at belongs to the test and is gone).
 */
export async function deleteNamespace(kubeConfig: KubeConfig, name: string, { attempts = 1200, intervalMs = 100 } = {}): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  for (const plural of Object.values(PLURALS)) {
    const coordinates = { group: GROUP, version: VERSION, namespace: name, plural };
    let list: { items?: Array<{ metadata?: { name?: string; finalizers?: string[] } }> } | undefined;
    // 429 "storage is (re)initializing": a CRD that a test just applied or changed serves again
    // within a second or two (its Retry-After says 1 s).
    for (let tries = 0; !list; tries += 1) {
      try {
        list = (await custom.listNamespacedCustomObject(coordinates)) as typeof list;
      } catch (err) {
        if (httpStatusOf(err) === 429 && tries < 30) {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          continue;
        }
        if (httpStatusOf(err) === 404) break; // the CRD is not installed, or the namespace is already gone
        throw err;
      }
    }
    if (!list) continue;
    for (const item of list.items ?? []) {
      if (!item.metadata?.name || !item.metadata.finalizers?.length) continue;
      try {
        await custom.patchNamespacedCustomObject(
          { ...coordinates, name: item.metadata.name, body: { metadata: { finalizers: null } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      } catch (err) {
        if (httpStatusOf(err) !== 404) throw err;
      }
    }
  }
  try {
    await core.deleteNamespace({ name });
  } catch (err) {
    if (httpStatusOf(err) === 404) return;
    throw err;
  }
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    try {
      await core.readNamespace({ name });
    } catch (err) {
      if (httpStatusOf(err) === 404) return;
      throw err;
    }
    // On a real node the chart's pods run, and each would take its whole termination grace period
    // (drain, preStop) to go: a test's pods are disposable, so they go at once. A terminating
    // namespace gets no new pods, so this ends.
    if (attempt % 20 === 0) await core.deleteCollectionNamespacedPod({ namespace: name, gracePeriodSeconds: 0 }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const left = await core.readNamespace({ name });
  throw new Error(`Namespace ${name} is still ${left.status?.phase} after ${(attempts * intervalMs) / 1000} s: ${JSON.stringify(left.status?.conditions ?? [])}`);
}
