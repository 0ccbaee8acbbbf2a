import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../../../lib/logger.ts';
import { ApiRefused, ApiUnavailable, type ApiClient } from '../api/client.ts';
import { REASONS, readyCondition, withReady, type Reason, type ReadyState } from '../conditions.ts';
import { describeKubeError, httpStatusOf, isConflict } from '../../../lib/k8s/api-errors.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { EventRecorder } from '../k8s/events.ts';
import { FINALIZER, type Resource } from '../resources.ts';

/** What a controller needs; tests pass the same things main.ts does. */
export interface ControllerDeps {
  kube: KubeClient;
  api: ApiClient;
  events: EventRecorder;
  logger: Logger;
  now?: () => Date;
}

/** How a reconcile ended, for the work queue and the metrics. */
export type ReconcileResult = { outcome: 'success' } | { outcome: 'not_ready'; retry: boolean } | { outcome: 'deleted' };

/** The resource cannot be made Ready now; `retry` says whether waiting (with backoff) can help. */
export class NotReady extends Error {
  readonly reason: Reason;
  readonly retry: boolean;

  constructor(reason: Reason, message: string, retry = true) {
    super(message);
    this.name = 'NotReady';
    this.reason = reason;
    this.retry = retry;
  }
}

/**
 * Runs an API call; whatever it throws becomes a NotReady with the API's meaning: no answer or a
 * 5xx is ApiUnavailable (retried with backoff), 401/403 is ApiRefused, and the other error answers
 * say what is wrong with the request (404 account, 409 account mismatch, 400 invalid).
 * A Kubernetes failure (asking for a token) passes through to the KubernetesApiError path.
 */
export async function apiCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ApiUnavailable) throw new NotReady(REASONS.ApiUnavailable, err.message);
    if (err instanceof ApiRefused) {
      if (err.status === 401 || err.status === 403) {
        throw new NotReady(REASONS.ApiRefused, `The API refused the operator's ServiceAccount token (${err.status}): ${err.message}`);
      }
      if (err.status === 404) throw new NotReady(REASONS.AccountNotFound, err.message);
      if (err.status === 409) throw new NotReady(REASONS.AccountMismatch, err.message);
      throw new NotReady(REASONS.InvalidSpec, err.message, false);
    }
    throw err;
  }
}

export async function requireAccount(api: ApiClient, accountId: string): Promise<void> {
  const account = await apiCall(() => api.getAccount(accountId));
  if (!account) {
    throw new NotReady(
      REASONS.AccountNotFound,
      `Account ${accountId} does not exist in the store: create it with "viewfinder accounts create" and set spec.account to its id`,
    );
  }
}

export function hasFinalizer(resource: Resource): boolean {
  return resource.metadata.finalizers?.includes(FINALIZER) ?? false;
}

/** Adds the finalizer with a resourceVersion-guarded update; a conflict is retried by the queue. */
export async function ensureFinalizer<T extends Resource>(kube: KubeClient, resource: T): Promise<T> {
  if (hasFinalizer(resource)) return resource;
  const finalizers = [...(resource.metadata.finalizers ?? []), FINALIZER];
  return kube.replaceResource({ ...resource, metadata: { ...resource.metadata, finalizers } });
}

export async function removeFinalizer<T extends Resource>(kube: KubeClient, resource: T): Promise<void> {
  const finalizers = (resource.metadata.finalizers ?? []).filter((finalizer) => finalizer !== FINALIZER);
  try {
    await kube.replaceResource({ ...resource, metadata: { ...resource.metadata, finalizers } });
  } catch (err) {
    // Already gone: someone else finished the deletion.
    if (httpStatusOf(err) !== 404) throw err;
  }
}

/**
 * The deletion path of both kinds, for a resource that is going (deletionTimestamp) or already gone
 * (an orphan whose finalizer was removed by hand): remove the store object, idempotently, then the
 * finalizer. Undefined when the resource is alive and should be reconciled normally.
 */
async function finalizeIfDeleted<T extends Resource>(
  deps: ControllerDeps,
  resource: T | null,
  removeFromStore: () => Promise<void>,
): Promise<ReconcileResult | undefined> {
  if (resource && !resource.metadata.deletionTimestamp) return undefined;
  if (resource && !hasFinalizer(resource)) return { outcome: 'deleted' };
  try {
    await apiCall(removeFromStore);
  } catch (err) {
    if (!resource) throw err;
    return failReconcile(deps, resource, err);
  }
  if (resource) await removeFinalizer(deps.kube, resource);
  return { outcome: 'deleted' };
}

/**
 * The shape of every reconcile: read the resource; if it is going (or gone), clean up the store and
 * let it go; otherwise make sure it carries the finalizer, then apply it. Whatever apply throws ends
 * in a False Ready condition (failReconcile); a conflict on the finalizer update goes to the queue.
 */
export async function reconcileResource<T extends Resource>(
  deps: ControllerDeps,
  kind: T['kind'],
  namespace: string,
  name: string,
  steps: { removeFromStore(): Promise<void>; apply(resource: T, now: Date): Promise<void> },
): Promise<ReconcileResult> {
  const resource = await deps.kube.getResource<T>(kind, namespace, name);
  const deleted = await finalizeIfDeleted(deps, resource, steps.removeFromStore);
  if (deleted || !resource) return deleted ?? { outcome: 'deleted' };
  const current = await ensureFinalizer(deps.kube, resource);
  try {
    await steps.apply(current, (deps.now ?? (() => new Date()))());
    return { outcome: 'success' };
  } catch (err) {
    return failReconcile(deps, current, err);
  }
}

/**
 * Writes the status only when it differs, so a reconcile with nothing to do writes nothing. A merge
 * patch keeps the fields it does not name; with `replace`, the fields `status` leaves out are removed.
 */
export async function writeStatus<T extends Resource>(kube: KubeClient, resource: T, status: NonNullable<T['status']>, options: { replace?: boolean } = {}): Promise<void> {
  if (isDeepStrictEqual(normalize(resource.status), normalize(status))) return;
  const removed = options.replace ? Object.keys(resource.status ?? {}).filter((field) => !(field in status)) : [];
  await kube.patchStatus(resource.kind, resource.metadata.namespace, resource.metadata.name, { ...Object.fromEntries(removed.map((field) => [field, null])), ...status });
}

function normalize(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? {}));
}

/**
 * Ends a reconcile that failed: Ready=False with the reason (on top of the status the resource
 * already had), a Warning event when the reason or message is new, and whether to retry. Conflicts
 * are not failures: someone else changed the object, so the queue simply runs the reconcile again.
 */
export async function failReconcile<T extends Resource>(deps: ControllerDeps, resource: T, err: unknown): Promise<ReconcileResult> {
  if (isConflict(err)) return { outcome: 'not_ready', retry: true };
  const failure =
    err instanceof NotReady ? err : new NotReady(REASONS.KubernetesApiError, `A Kubernetes API call failed: ${describeKubeError(err)}`);
  const state: ReadyState = { ready: false, reason: failure.reason, message: failure.message };
  const now = (deps.now ?? (() => new Date()))();
  const previous = readyCondition(resource.status?.conditions);
  const conditions = withReady(resource.status?.conditions, state, resource.metadata.generation, now);
  const { namespace, name } = resource.metadata;
  // Logged and recorded once per new failure; the retries of the same failure log at debug only.
  const isNew = previous?.reason !== failure.reason || previous.message !== failure.message || previous.status !== 'False';
  const fields = { kind: resource.kind, object: `${namespace}/${name}`, reason: failure.reason, message: failure.message };
  if (isNew) {
    deps.logger.warn(fields, `${resource.kind} was not reconciled`);
    await deps.events.record(resource, 'Warning', failure.reason, failure.message);
  } else {
    deps.logger.debug(fields, `${resource.kind} was still not reconciled`);
  }
  try {
    await writeStatus(deps.kube, resource, { ...resource.status, observedGeneration: resource.metadata.generation, conditions } as NonNullable<T['status']>);
  } catch (statusErr) {
    if (!isConflict(statusErr) && httpStatusOf(statusErr) !== 404) throw statusErr;
  }
  return { outcome: 'not_ready', retry: failure.retry };
}

export function readyState(message: string): ReadyState {
  return { ready: true, reason: REASONS.Reconciled, message };
}
