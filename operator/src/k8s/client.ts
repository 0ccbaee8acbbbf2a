import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Lease,
  type V1Secret,
} from '@kubernetes/client-node';
import { GROUP, PLURALS, VERSION, type Kind, type Resource } from '../resources.ts';

/**
 * The Kubernetes calls the operator makes, in one place, over @kubernetes/client-node (v2:
 * promise-based, parameters as one object). Everything else receives this, so the controllers
 * never see the generated API classes.
 */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export class KubeClient {
  readonly config: KubeConfig;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;

  constructor(config: KubeConfig) {
    this.config = config;
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.core = config.makeApiClient(CoreV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
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

/** The HTTP status of a failed client-node call (ApiException.code, or Watch's statusCode). */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, statusCode } = err as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'number') return code;
  if (typeof statusCode === 'number') return statusCode;
  return undefined;
}

export function isConflict(err: unknown): boolean {
  return httpStatusOf(err) === 409;
}

async function orNull<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (err) {
    if (httpStatusOf(err) === 404) return null;
    throw err;
  }
}

/** A short, secret-free description of a Kubernetes API failure, for conditions and logs. */
export function describeKubeError(err: unknown): string {
  const status = httpStatusOf(err);
  const body = (err as { body?: unknown }).body;
  let message: string | undefined;
  if (typeof body === 'string') {
    try {
      message = (JSON.parse(body) as { message?: string }).message;
    } catch {
      message = undefined;
    }
  } else if (typeof body === 'object' && body !== null) {
    message = (body as { message?: string }).message;
  }
  const text = message ?? (err instanceof Error ? err.message : String(err));
  return status === undefined ? text : `HTTP ${status}: ${text}`;
}
