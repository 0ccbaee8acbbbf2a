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
  /** A PageMonitor page's credentialsSecretRef, or a Site's spec.storage.credentialsSecretRef, names no Secret in the namespace. */
  CredentialsNotFound: 'CredentialsNotFound',
  /** A Site's spec.storage.name is another destination's in the account (one registered by the API, or another Site's). */
  DestinationConflict: 'DestinationConflict',
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
  // A PageMonitor's Changed condition (True: PageChanged, False: NoChange, Unknown: NotRunYet) and its events.
  /** A page of the last run differed from its baseline beyond the threshold (also the Warning event). */
  PageChanged: 'PageChanged',
  NoChange: 'NoChange',
  NotRunYet: 'NotRunYet',
  /** A page of a run could not be captured or compared (Warning event). */
  RunFailed: 'RunFailed',
  /** A page got a new baseline: its first picture, or one accepted in the API (Normal event). */
  BaselineAccepted: 'BaselineAccepted',
  // A PageMonitor's Healthy condition (issue #40): True ChecksPassing, False ChecksFailing, Unknown
  // NotRunYet (no run has judged the checks yet) or NoChecks (no page declares any); the events are
  // recorded on a change of state only: ChecksFailing (Warning) when the set of failing checks
  // changes and is not empty, ChecksPassing (Normal) when it empties.
  /** Every page with checks passed them in the last run that judged them. */
  ChecksPassing: 'ChecksPassing',
  /** A page failed a check in the last run that judged it. */
  ChecksFailing: 'ChecksFailing',
  NoChecks: 'NoChecks',
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
  return withCondition(conditions, { type: 'Ready', status: state.ready ? 'True' : 'False', reason: state.reason, message: state.message, observedGeneration: generation }, now);
}

/** The conditions with `next` set (replacing the one of its type); lastTransitionTime moves only when its status flips. */
export function withCondition(conditions: readonly Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition[] {
  const previous = conditions?.find((condition) => condition.type === next.type);
  const lastTransitionTime = previous && previous.status === next.status ? previous.lastTransitionTime : now.toISOString();
  return [...(conditions ?? []).filter((condition) => condition.type !== next.type), { ...next, lastTransitionTime }];
}

export function readyCondition(conditions: readonly Condition[] | undefined): Condition | undefined {
  return conditions?.find((condition) => condition.type === 'Ready');
}

export function isReady(conditions: readonly Condition[] | undefined): boolean {
  return readyCondition(conditions)?.status === 'True';
}
