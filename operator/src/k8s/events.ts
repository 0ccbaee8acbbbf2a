import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../../../lib/logger.ts';
import { OPERATOR_NAME, type Resource } from '../resources.ts';
import { describeKubeError, httpStatusOf } from '../../../lib/k8s/api-errors.ts';
import type { KubeClient } from './client.ts';

/**
 * core/v1 Events on the resources, as `kubectl describe` shows them. Best effort: a failed Event is
 * logged and dropped, never a reason to fail a reconcile. Messages never hold a key's plaintext.
 *
 * An event given a `once` key (e.g. a monitor run's id and page) gets a name derived from it and the
 * resource's uid, so recording it again (a retried reconcile, a restarted operator, a new leader)
 * meets AlreadyExists and makes no second event.
 */
export class EventRecorder {
  private readonly kube: KubeClient;
  private readonly logger: Logger;
  private readonly now: () => Date;

  constructor(kube: KubeClient, logger: Logger, now: () => Date = () => new Date()) {
    this.kube = kube;
    this.logger = logger;
    this.now = now;
  }

  async record(resource: Resource, type: 'Normal' | 'Warning', reason: string, message: string, once?: string): Promise<void> {
    const { namespace, name, uid, resourceVersion } = resource.metadata;
    const at = this.now();
    const suffix = once === undefined ? randomBytes(8).toString('hex') : createHash('sha256').update(`${uid}/${reason}/${once}`).digest('hex').slice(0, 16);
    try {
      await this.kube.createEvent(namespace, {
        metadata: { name: `${name}.${suffix}`, namespace },
        involvedObject: { apiVersion: resource.apiVersion, kind: resource.kind, name, namespace, uid, resourceVersion },
        type,
        reason,
        message,
        count: 1,
        firstTimestamp: at,
        lastTimestamp: at,
        source: { component: OPERATOR_NAME },
        reportingComponent: OPERATOR_NAME,
        reportingInstance: OPERATOR_NAME,
      });
    } catch (err) {
      if (once !== undefined && httpStatusOf(err) === 409) return;
      this.logger.warn({ kind: resource.kind, object: `${namespace}/${name}`, reason, err: describeKubeError(err) }, 'Recording an event failed');
    }
  }
}
