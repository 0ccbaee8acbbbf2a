import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../logger.ts';
import { httpStatusOf, type ListResult } from './api-errors.ts';

/**
 * An informer: lists, then watches from the listed resourceVersion, keeping a cache by
 * namespace/name. Watches break, so: a 410 Gone (the resourceVersion was compacted away, as an
 * HTTP status or as an ERROR event) relists; any other failure reconnects after a jittered
 * exponential backoff; a watch the server closes normally resumes at once from the last
 * resourceVersion seen. Every resyncMs each cached object is handed to onResync, so a reconcile
 * that needs repeating (a drifted store) happens even when nothing changes in Kubernetes.
 */
export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface InformerHandlers<T> {
  onUpsert(object: T): void;
  onDelete(object: T): void;
  onResync?(object: T): void;
}

export interface InformerOptions<T> {
  /** For log lines: the kind and namespace. */
  name: string;
  kubeConfig: KubeConfig;
  list(): Promise<ListResult<T>>;
  /** The watch URL path, e.g. /apis/viewfinder.dev/v1alpha1/namespaces/shop/sites. */
  watchPath: string;
  labelSelector?: string;
  resyncMs: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  logger: Logger;
  handlers: InformerHandlers<T>;
}

export class Informer<T extends KubeObject> {
  private readonly options: InformerOptions<T>;
  private readonly cache = new Map<string, T>();
  private readonly watch: Watch;
  private resourceVersion = '';
  private abort: AbortController | undefined;
  private stopped = false;
  private synced = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private firstSync: { resolve: () => void; promise: Promise<void> };
  /** How often it listed: once at start, then once per 410 (tests read it). */
  lists = 0;

  constructor(options: InformerOptions<T>) {
    this.options = options;
    this.watch = new Watch(options.kubeConfig);
    let resolve = () => {};
    const promise = new Promise<void>((r) => (resolve = r));
    this.firstSync = { resolve, promise };
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Starts listing and watching; resolves once the first list is in the cache (it keeps retrying until then). */
  start(): Promise<void> {
    void this.listAndWatch();
    this.resyncTimer = setInterval(() => this.resync(), this.options.resyncMs);
    this.resyncTimer.unref();
    return this.firstSync.promise;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.resyncTimer);
    this.abort?.abort();
    this.firstSync.resolve();
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  resync(): void {
    const handler = this.options.handlers.onResync ?? this.options.handlers.onUpsert;
    for (const object of this.cache.values()) handler(object);
  }

  private async listAndWatch(): Promise<void> {
    if (this.stopped) return;
    try {
      const { items, resourceVersion } = await this.options.list();
      this.lists += 1;
      this.replace(items);
      this.resourceVersion = resourceVersion;
      this.synced = true;
      this.firstSync.resolve();
      await this.startWatch();
    } catch (err) {
      this.options.logger.warn({ informer: this.options.name, err: String(err) }, 'Listing failed; retrying');
      this.retry(() => this.listAndWatch());
    }
  }

  /** A relist: objects that vanished while the watch was down are reported deleted. */
  private replace(items: T[]): void {
    const seen = new Set<string>();
    for (const item of items) {
      const key = keyOf(item);
      seen.add(key);
      this.cache.set(key, item);
      this.options.handlers.onUpsert(item);
    }
    for (const [key, object] of this.cache) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      this.options.handlers.onDelete(object);
    }
  }

  private async startWatch(): Promise<void> {
    if (this.stopped) return;
    let gone = false;
    const query: Record<string, string | boolean> = { resourceVersion: this.resourceVersion, allowWatchBookmarks: true };
    if (this.options.labelSelector) query.labelSelector = this.options.labelSelector;
    this.abort = await this.watch.watch(
      this.options.watchPath,
      query,
      (type, object: T & { code?: number }) => {
        if (type === 'ERROR') {
          if (object.code === 410) gone = true;
          return;
        }
        const resourceVersion = object.metadata?.resourceVersion;
        if (resourceVersion) this.resourceVersion = resourceVersion;
        this.failures = 0;
        if (type === 'BOOKMARK') return;
        const key = keyOf(object);
        if (type === 'DELETED') {
          this.cache.delete(key);
          this.options.handlers.onDelete(object);
        } else {
          this.cache.set(key, object);
          this.options.handlers.onUpsert(object);
        }
      },
      (err: unknown) => this.watchEnded(err, gone),
    );
  }

  private watchEnded(err: unknown, gone: boolean): void {
    if (this.stopped) return;
    if (gone || httpStatusOf(err) === 410) {
      this.options.logger.info({ informer: this.options.name }, 'Watch expired (410 Gone); relisting');
      void this.listAndWatch();
      return;
    }
    // The client ends a quiet watch after 30 s of inactivity: that is a normal end, not a failure.
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    if (err && !timedOut) {
      this.options.logger.warn({ informer: this.options.name, err: String(err) }, 'Watch failed; reconnecting');
      this.retry(() => this.startWatch().catch((cause: unknown) => this.watchEnded(cause, false)));
      return;
    }
    void this.startWatch().catch((cause: unknown) => this.watchEnded(cause, false));
  }

  /** Jittered exponential backoff: full jitter over [delay/2, delay], so replicas do not reconnect in step. */
  private retry(action: () => void): void {
    const base = this.options.backoffBaseMs ?? 200;
    const max = this.options.backoffMaxMs ?? 30_000;
    const delay = Math.min(base * 2 ** this.failures, max);
    this.failures += 1;
    this.retryTimer = setTimeout(action, delay / 2 + Math.random() * (delay / 2));
    this.retryTimer.unref();
  }
}

export function keyOf(object: KubeObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}
