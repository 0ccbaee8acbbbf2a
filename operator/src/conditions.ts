import type { Condition } from './resources.ts';

/**
 * The Ready condition and the reasons it can carry. Every reconcile ends in one of these: an error
 * is always a False condition with its reason, never only a log line.
 */
export const REASONS = {
  /** The API's store matches the resource (and, for an ApiKey, the Secret holds the key). */
  Reconciled: 'Reconciled',
  /** spec.account names no account in the store (create it with `viewfinder accounts create`). */
  AccountNotFound: 'AccountNotFound',
  /** The object already belongs to another account in the store. */
  AccountMismatch: 'AccountMismatch',
  /** spec.siteRef names no Site in the namespace, or one that is not reconciled yet. */
  SiteNotFound: 'SiteNotFound',
  /** The spec is invalid in a way the CRD schema cannot catch (e.g. a domain that does not normalize). */
  InvalidSpec: 'InvalidSpec',
  /** A Secret of that name exists and is not this ApiKey's: it is never overwritten. */
  SecretConflict: 'SecretConflict',
  /** The hosted API could not be reached, did not answer in time, or answered 5xx. */
  ApiUnavailable: 'ApiUnavailable',
  /** The hosted API refused the operator's token (401/403): it does not trust its ServiceAccount. */
  ApiRefused: 'ApiRefused',
  /** A Kubernetes API call failed (other than a conflict, which is simply retried). */
  KubernetesApiError: 'KubernetesApiError',
  // PageMonitor's Changed condition and events.
  PageChanged: 'PageChanged',
  NoChange: 'NoChange',
  NotRunYet: 'NotRunYet',
  RunFailed: 'RunFailed',
  BaselineAccepted: 'BaselineAccepted',
} as const;

export type Reason = (typeof REASONS)[keyof typeof REASONS];

export interface ReadyState {
  ready: boolean;
  reason: Reason;
  message: string;
}

/**
 * The conditions with Ready set to `state`. lastTransitionTime moves only when the status flips
 * (True/False), so it says how long the resource has been in its current state.
 */
export function withReady(conditions: readonly Condition[] | undefined, state: ReadyState, generation: number, now: Date): Condition[] {
  const status = state.ready ? 'True' : 'False';
  const previous = conditions?.find((condition) => condition.type === 'Ready');
  const ready: Condition = {
    type: 'Ready',
    status,
    reason: state.reason,
    message: state.message,
    lastTransitionTime: previous && previous.status === status ? previous.lastTransitionTime : now.toISOString(),
    observedGeneration: generation,
  };
  return [...(conditions ?? []).filter((condition) => condition.type !== 'Ready'), ready];
}

export function readyCondition(conditions: readonly Condition[] | undefined): Condition | undefined {
  return conditions?.find((condition) => condition.type === 'Ready');
}

export function isReady(conditions: readonly Condition[] | undefined): boolean {
  return readyCondition(conditions)?.status === 'True';
}
