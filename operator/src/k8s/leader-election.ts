import { V1MicroTime, type V1Lease, type V1OwnerReference } from '@kubernetes/client-node';
import type { Logger } from '../../../lib/logger.ts';
import { describeKubeError, isConflict } from '../../../lib/k8s/api-errors.ts';
import type { KubeClient } from './client.ts';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: every retryPeriod the
 * candidate reads the Lease; it takes it when it is free, released, or expired, and the leader
 * renews it. Expiry is judged by this process's own clock since it last saw the record change,
 * never by comparing renewTime with local time, so clock skew between nodes cannot make two leaders.
 * Every write is guarded by resourceVersion: of two candidates racing, one gets a 409. A leader
 * that cannot renew within renewDeadline steps down before its Lease can expire for the others.
 *
 * On stop, a leader gives the Lease up, within RELEASE_DEADLINE_MS. That needs the operator's RBAC
 * and ServiceAccount, which helm uninstall deletes at the same moment as its pods: so the Lease is
 * also owned by the operator's Deployment (ownerDeployment), and the garbage collector deletes it
 * with the Deployment whatever the release managed to do.
 */
export interface LeaderElectionOptions {
  kube: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  /** A Deployment in `namespace` that owns the Lease (the operator's own); none outside a cluster. */
  ownerDeployment?: string | undefined;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  logger: Logger;
  onStartedLeading(): void;
  onStoppedLeading(): void | Promise<void>;
}

/** How long stopping may take to finish a tick and release the Lease, so that a pod's exit never waits on an API server that does not answer. */
const RELEASE_DEADLINE_MS = 3000;

export class LeaderElector {
  private readonly options: LeaderElectionOptions;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenewed = 0;
  /** The last record seen (holder and renewTime) and when this process saw it change. */
  private observed: { record: string; at: number } | undefined;
  private loop: Promise<void> | undefined;
  private owner: V1OwnerReference | undefined;
  private ownerUnknown = false;

  constructor(options: LeaderElectionOptions) {
    this.options = options;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.loop = this.tick();
  }

  /** Stops campaigning; a leader releases the Lease so that another replica takes over at once. */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const release = async () => {
      await this.loop;
      if (this.leading && (options.release ?? true)) await this.release();
    };
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      deadline = setTimeout(() => {
        this.options.logger.warn({ lease: this.options.name, deadlineMs: RELEASE_DEADLINE_MS }, 'Releasing the Lease took too long; it will expire');
        resolve();
      }, RELEASE_DEADLINE_MS);
    });
    await Promise.race([release(), late]);
    clearTimeout(deadline);
    await this.stepDown();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const now = performance.now();
    let held = false;
    try {
      held = await this.tryAcquireOrRenew(now);
    } catch (err) {
      if (!isConflict(err)) this.options.logger.warn({ lease: this.options.name, err: describeKubeError(err) }, 'Reading or writing the Lease failed');
    }
    if (this.stopped) return;
    if (held) {
      this.lastRenewed = now;
      if (!this.leading) {
        this.leading = true;
        this.options.logger.info({ lease: this.options.name, identity: this.options.identity }, 'Became the leader');
        this.options.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenewed > this.options.renewDeadlineMs) {
      this.options.logger.warn({ lease: this.options.name, identity: this.options.identity }, 'Lost the lease; stepped down');
      await this.stepDown();
    }
    if (!this.stopped) {
      this.timer = setTimeout(() => {
        this.loop = this.tick();
      }, this.options.retryPeriodMs);
      this.timer.unref();
    }
  }

  private async stepDown(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    await this.options.onStoppedLeading();
  }

  private async tryAcquireOrRenew(now: number): Promise<boolean> {
    const { kube, namespace, name, identity, leaseDurationMs } = this.options;
    const lease = await kube.getLease(namespace, name);
    const durationSeconds = Math.max(1, Math.ceil(leaseDurationMs / 1000));
    const owner = await this.resolveOwner();
    if (!lease) {
      await kube.createLease(namespace, {
        metadata: { name, namespace, ...(owner ? { ownerReferences: [owner] } : {}) },
        spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: new V1MicroTime(), renewTime: new V1MicroTime(), leaseTransitions: 0 },
      });
      return true;
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}|${String(spec.renewTime ?? '')}`;
    if (this.observed?.record !== record) this.observed = { record, at: now };
    const holder = spec.holderIdentity ?? '';
    const mine = holder === identity;
    const expired = now - this.observed.at > (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (!mine && holder !== '' && !expired) return false;

    // A Lease made before it had an owner (an older operator) gets one with its next write.
    const owners = lease.metadata?.ownerReferences ?? [];
    const metadata = owner && !owners.some((ref) => ref.uid === owner.uid) ? { ...lease.metadata, ownerReferences: [...owners, owner] } : lease.metadata;
    const updated: V1Lease = {
      ...lease,
      metadata,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        renewTime: new V1MicroTime(),
        acquireTime: mine ? spec.acquireTime : new V1MicroTime(),
        leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    await kube.replaceLease(namespace, updated);
    return true;
  }

  /** The ownerReference to ownerDeployment, read once; without it (no such Deployment, no right to read it) the Lease has no owner. */
  private async resolveOwner(): Promise<V1OwnerReference | undefined> {
    const { kube, namespace, ownerDeployment, logger, name } = this.options;
    if (!ownerDeployment || this.owner) return this.owner;
    try {
      this.owner = await kube.deploymentOwner(namespace, ownerDeployment);
    } catch (err) {
      if (!this.ownerUnknown) logger.warn({ lease: name, deployment: ownerDeployment, err: describeKubeError(err) }, 'Reading the Deployment that owns the Lease failed; the Lease has no owner until it succeeds');
      this.ownerUnknown = true;
    }
    return this.owner;
  }

  /** Gives the Lease up (empty holder), so that another replica need not wait for it to expire. */
  private async release(): Promise<void> {
    const { kube, namespace, name, identity } = this.options;
    try {
      const lease = await kube.getLease(namespace, name);
      if (!lease || lease.spec?.holderIdentity !== identity) return;
      await kube.replaceLease(namespace, { ...lease, spec: { ...lease.spec, holderIdentity: '', renewTime: new V1MicroTime() } });
    } catch (err) {
      this.options.logger.warn({ lease: name, err: describeKubeError(err) }, 'Releasing the Lease failed');
    }
  }
}
