import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Lease,
  type V1OwnerReference,
  type V1Secret,
} from '@kubernetes/client-node';
import { httpStatusOf, orNull, type ListResult } from '../../../lib/k8s/api-errors.ts';
import { GROUP, PLURALS, VERSION, type Kind, type Resource } from '../resources.ts';

/**
 * The Kubernetes calls the operator makes, in one place, over @kubernetes/client-node (v2:
 * promise-based, parameters as one object). Everything else receives this, so the controllers
 * never see the generated API classes.
 */
export class KubeClient {
  readonly config: KubeConfig;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly apps: AppsV1Api;

  constructor(config: KubeConfig) {
    this.config = config;
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.core = config.makeApiClient(CoreV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
    this.apps = config.makeApiClient(AppsV1Api);
  }

  async getResource<T extends Resource>(kind: Kind, namespace: string, name: string): Promise<T | null> {
    return orNull(() => this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURALS[kind], namespace, name }));
  }

  /** All namespaces when namespace is undefined. */
  async listResources<T extends Resource>(kind: Kind, namespace: string | undefined): Promise<ListResult<T>> {
    const list = (
      namespace === undefined
        ? await this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURALS[kind] })
        : await this.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURALS[kind], namespace })
    ) as { items: T[]; metadata: { resourceVersion: string } };
    return { items: list.items, resourceVersion: list.metadata.resourceVersion };
  }

  /** A full update guarded by metadata.resourceVersion: a stale object is a 409, never a lost write. */
  async replaceResource<T extends Resource>(resource: T): Promise<T> {
    const { namespace, name } = resource.metadata;
    return (await this.custom.replaceNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURALS[resource.kind],
      namespace,
      name,
      body: resource,
    })) as T;
  }

  /** A merge patch of the status subresource: the operator owns status, so it never needs a precondition. */
  async patchStatus<T extends Resource>(kind: Kind, namespace: string, name: string, status: object): Promise<T> {
    return (await this.custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, plural: PLURALS[kind], namespace, name, body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as T;
  }

  async getSecret(namespace: string, name: string): Promise<V1Secret | null> {
    return orNull(() => this.core.readNamespacedSecret({ namespace, name }));
  }

  async createSecret(namespace: string, body: V1Secret): Promise<V1Secret> {
    return this.core.createNamespacedSecret({ namespace, body });
  }

  async replaceSecret(namespace: string, body: V1Secret): Promise<V1Secret> {
    return this.core.replaceNamespacedSecret({ namespace, name: body.metadata?.name ?? '', body });
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    await orNull(() => this.core.deleteNamespacedSecret({ namespace, name }));
  }

  async listSecrets(namespace: string | undefined, labelSelector: string): Promise<ListResult<V1Secret>> {
    const list =
      namespace === undefined
        ? await this.core.listSecretForAllNamespaces({ labelSelector })
        : await this.core.listNamespacedSecret({ namespace, labelSelector });
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  async createEvent(namespace: string, body: Parameters<CoreV1Api['createNamespacedEvent']>[0]['body']): Promise<void> {
    await this.core.createNamespacedEvent({ namespace, body });
  }

  /** An ownerReference to a Deployment, for objects that must go when it goes. */
  async deploymentOwner(namespace: string, name: string): Promise<V1OwnerReference> {
    const deployment = await this.apps.readNamespacedDeployment({ namespace, name });
    return { apiVersion: 'apps/v1', kind: 'Deployment', name, uid: deployment.metadata?.uid ?? '' };
  }

  async getLease(namespace: string, name: string): Promise<V1Lease | null> {
    return orNull(() => this.coordination.readNamespacedLease({ namespace, name }));
  }

  async createLease(namespace: string, body: V1Lease): Promise<V1Lease> {
    return this.coordination.createNamespacedLease({ namespace, body });
  }

  async replaceLease(namespace: string, body: V1Lease): Promise<V1Lease> {
    return this.coordination.replaceNamespacedLease({ namespace, name: body.metadata?.name ?? '', body });
  }
}

