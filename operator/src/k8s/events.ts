import { randomBytes } from 'node:crypto';
import type { Logger } from '../../../lib/logger.ts';
import { OPERATOR_NAME, type Resource } from '../resources.ts';
import { describeKubeError } from '../../../lib/k8s/api-errors.ts';
import type { KubeClient } from './client.ts';

/**
 * core/v1 Events on the resources, as `kubectl describe` shows them. Best effort: a failed Event is
 * logged and dropped, never a reason to fail a reconcile. Messages never hold a key's plaintext.
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

  async record(resource: Resource, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const { namespace, name, uid, resourceVersion } = resource.metadata;
    const at = this.now();
    try {
      await this.kube.createEvent(namespace, {
        metadata: { name: `${name}.${randomBytes(8).toString('hex')}`, namespace },
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
      this.logger.warn({ kind: resource.kind, object: `${namespace}/${name}`, reason, err: describeKubeError(err) }, 'Recording an event failed');
    }
  }
}
