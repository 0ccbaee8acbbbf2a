import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { crdAjv } from './crd-ajv.ts';

/**
 * An in-process Kubernetes API server, on loopback over plain HTTP, implementing for real the
 * subset the operator uses, so that @kubernetes/client-node talks to it exactly as to a cluster:
 *
 * - Sites, ApiKeys and PageMonitors (validated against the CRDs' openAPIV3Schema, defaults applied), Secrets,
 *   Events, Leases and EndpointSlices: create, get, list (with label selectors), replace, merge-patch, delete;
 * - the status subresource: spec changes bump metadata.generation, status changes do not, and
 *   each endpoint ignores the other half;
 * - finalizers: a delete with finalizers only sets deletionTimestamp; removing the last one deletes;
 * - optimistic concurrency: a write with a stale metadata.resourceVersion is a 409;
 * - garbage collection: when an object goes, the objects that name it in ownerReferences go too;
 * - watches (?watch=true&resourceVersion=): ADDED, MODIFIED, DELETED, and BOOKMARK when asked;
 *   the event history is a small window (historyLimit), and a watch from before it gets an ERROR
 *   event with a 410 Gone Status, as the real server sends.
 *
 * - ServiceAccount tokens: TokenRequests (POST .../serviceaccounts/{name}/token, for any name: the
 *   fake keeps no ServiceAccount objects) issue random tokens bound to their audiences, and
 *   TokenReviews authenticate exactly those tokens, for an audience they were issued for.
 *
 * Not implemented: CEL rules (x-kubernetes-validations), strategic-merge and apply patches,
 * field selectors, pagination. Tests call compact() and dropWatches() to break watches on demand.
 */
interface Resource {
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  /** CRs with a status subresource. */
  statusSubresource: boolean;
  validate?: ValidateFunction;
  defaults?: (object: KubeObject) => void;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ uid: string; kind: string; name: string; controller?: boolean }>;
    [field: string]: unknown;
  };
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface HistoryEvent {
  type: WatchEventType;
  plural: string;
  object: KubeObject;
  resourceVersion: number;
}

interface Watcher {
  plural: string;
  namespace: string | undefined;
  selector: Record<string, string>;
  res: http.ServerResponse;
}

export interface FakeKubeApiServer {
  url: string;
  /** A KubeConfig pointing at this server (the same as `kubeconfigYaml` written to a file). */
  kubeConfig(): KubeConfig;
  kubeconfigYaml: string;
  /** The stored object, or undefined (for assertions). */
  get(plural: string, namespace: string, name: string): KubeObject | undefined;
  list(plural: string, namespace?: string): KubeObject[];
  /** Forgets the whole watch history: any watch from an older resourceVersion gets 410 Gone. */
  compact(): void;
  /** Ends every open watch stream, as an API server restart or a load balancer would. */
  dropWatches(): void;
  /** How many watch requests each plural has received (tests check reconnection). */
  watchRequests: Record<string, number>;
  /** Answers the next `count` requests matching the predicate with this status (to simulate outages). */
  failNext(count: number, status: number, matches?: (method: string, url: string) => boolean): void;
  /** How many TokenReviews were asked for (tests check the API's cache). */
  tokenReviews: number;
  close(): Promise<void>;
}

const CRD_DIR = path.join(import.meta.dirname, '..', '..', 'crds');

/** A client config for a stand-in Kubernetes API server that a test serves on loopback (one that hangs, say). */
export function kubeConfigAt(server: http.Server): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'stand-in', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'api', token: 'api-token' }],
    contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'api' }],
    currentContext: 'stand-in',
  });
  return config;
}

export async function startFakeKubeApiServer(options: { historyLimit?: number } = {}): Promise<FakeKubeApiServer> {
  const historyLimit = options.historyLimit ?? 1000;
  const resources: Record<string, Resource> = {
    sites: { ...crdResource('site.yaml'), kind: 'Site' },
    apikeys: { ...crdResource('apikey.yaml'), kind: 'ApiKey' },
    pagemonitors: { ...crdResource('pagemonitor.yaml'), kind: 'PageMonitor' },
    secrets: { apiVersion: 'v1', kind: 'Secret', namespaced: true, statusSubresource: false },
    events: { apiVersion: 'v1', kind: 'Event', namespaced: true, statusSubresource: false },
    leases: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespaced: true, statusSubresource: false },
    endpointslices: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespaced: true, statusSubresource: false },
  };
  const objects = new Map<string, Map<string, KubeObject>>(Object.keys(resources).map((plural) => [plural, new Map()]));
  let resourceVersion = 1;
  let history: HistoryEvent[] = [];
  /** Watches from a resourceVersion below this one can no longer be served. */
  let oldestServable = 1;
  const watchers = new Set<Watcher>();
  const watchRequests: Record<string, number> = {};
  const failures: Array<{ count: number; status: number; matches: (method: string, url: string) => boolean }> = [];

  const tokens = new Map<string, { username: string; uid: string; audiences: string[] }>();
  const counters = { tokenReviews: 0 };
  const store = (plural: string) => objects.get(plural) as Map<string, KubeObject>;
  const keyOf = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

  const record = (type: WatchEventType, plural: string, object: KubeObject) => {
    const event: HistoryEvent = { type, plural, object: structuredClone(object), resourceVersion: Number(object.metadata.resourceVersion) };
    history.push(event);
    if (history.length > historyLimit) {
      const dropped = history.splice(0, history.length - historyLimit);
      oldestServable = (dropped.at(-1)?.resourceVersion ?? oldestServable) ;
    }
    for (const watcher of watchers) if (matchesWatch(watcher, event)) send(watcher.res, { type, object: event.object });
  };

  const write = (plural: string, object: KubeObject, type: WatchEventType) => {
    object.metadata.resourceVersion = String(++resourceVersion);
    store(plural).set(keyOf(object.metadata.namespace, object.metadata.name), object);
    record(type, plural, object);
  };

  const remove = (plural: string, object: KubeObject) => {
    store(plural).delete(keyOf(object.metadata.namespace, object.metadata.name));
    object.metadata.resourceVersion = String(++resourceVersion);
    record('DELETED', plural, object);
    collectGarbage(object.metadata.uid as string);
  };

  /** Background cascading deletion: dependents go (respecting their own finalizers). */
  const collectGarbage = (ownerUid: string) => {
    for (const [plural, items] of objects) {
      for (const item of [...items.values()]) {
        if (!item.metadata.ownerReferences?.some((owner) => owner.uid === ownerUid)) continue;
        deleteObject(plural, item);
      }
    }
  };

  const deleteObject = (plural: string, object: KubeObject): KubeObject => {
    if ((object.metadata.finalizers ?? []).length > 0) {
      if (!object.metadata.deletionTimestamp) {
        object.metadata.deletionTimestamp = new Date().toISOString();
        write(plural, object, 'MODIFIED');
      }
      return object;
    }
    remove(plural, object);
    return object;
  };

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      try {
        handle(req, res, body);
      } catch (err) {
        if (err instanceof ApiError) status(res, err.code, err.reason, err.message);
        else status(res, 500, 'InternalError', String(err));
      }
    });
  });

  const issueToken = (res: http.ServerResponse, namespace: string, name: string, body: string) => {
    const request = JSON.parse(body || '{}') as { spec?: { audiences?: string[]; expirationSeconds?: number } };
    const audiences = request.spec?.audiences ?? ['https://kubernetes.default.svc'];
    const expirationSeconds = request.spec?.expirationSeconds ?? 3600;
    const token = `fake-sa-token.${randomUUID()}`;
    tokens.set(token, { username: `system:serviceaccount:${namespace}:${name}`, uid: randomUUID(), audiences });
    json(res, 201, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: { name, namespace },
      spec: { audiences, expirationSeconds },
      status: { token, expirationTimestamp: new Date(Date.now() + expirationSeconds * 1000).toISOString() },
    });
  };

  const reviewToken = (res: http.ServerResponse, body: string) => {
    counters.tokenReviews += 1;
    const review = JSON.parse(body || '{}') as { spec?: { token?: string; audiences?: string[] } };
    const issued = tokens.get(review.spec?.token ?? '');
    const wanted = review.spec?.audiences ?? [];
    const audiences = issued ? (wanted.length === 0 ? issued.audiences : wanted.filter((audience) => issued.audiences.includes(audience))) : [];
    const authenticated = issued !== undefined && audiences.length > 0;
    json(res, 201, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: review.spec,
      status: authenticated
        ? { authenticated: true, user: { username: issued.username, uid: issued.uid, groups: ['system:serviceaccounts'] }, audiences }
        : { authenticated: false, error: issued ? 'token audiences are invalid' : 'invalid bearer token' },
    });
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://fake');
    const failure = failures.find((entry) => entry.count > 0 && entry.matches(method, url.pathname));
    if (failure) {
      failure.count -= 1;
      return status(res, failure.status, (http.STATUS_CODES[failure.status] ?? 'Error').replace(/\W/g, ''), 'injected failure');
    }
    const tokenRequest = /^\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\/([^/]+)\/token$/.exec(url.pathname);
    if (method === 'POST' && tokenRequest) return issueToken(res, tokenRequest[1] as string, tokenRequest[2] as string, body);
    if (method === 'POST' && url.pathname === '/apis/authentication.k8s.io/v1/tokenreviews') return reviewToken(res, body);
    const route = parsePath(url.pathname);
    if (!route) return status(res, 404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
    const resource = resources[route.plural] as Resource;
    const { plural, namespace, name, subresource } = route;
    const items = store(plural);
    const watch = url.searchParams.get('watch');

    if (method === 'GET' && name === undefined && (watch === 'true' || watch === '1')) return startWatch(req, res, plural, namespace, url.searchParams);
    if (method === 'GET' && name === undefined) {
      const selector = parseSelector(url.searchParams.get('labelSelector'));
      const list = [...items.values()].filter((item) => (namespace === undefined || item.metadata.namespace === namespace) && labelsMatch(item, selector));
      return json(res, 200, {
        apiVersion: resource.apiVersion,
        kind: `${resource.kind}List`,
        metadata: { resourceVersion: String(resourceVersion) },
        items: list,
      });
    }
    if (method === 'POST' && name === undefined) {
      const object = parseBody(body);
      object.metadata.namespace = namespace;
      if (items.has(keyOf(namespace, object.metadata.name))) {
        throw new ApiError(409, 'AlreadyExists', `${plural} "${object.metadata.name}" already exists`);
      }
      if (object.metadata.resourceVersion) throw new ApiError(400, 'BadRequest', 'resourceVersion should not be set on objects to be created');
      const created: KubeObject = {
        ...object,
        apiVersion: resource.apiVersion,
        kind: resource.kind,
        metadata: {
          ...object.metadata,
          uid: randomUUID(),
          generation: 1,
          creationTimestamp: new Date().toISOString(),
        },
      };
      if (resource.statusSubresource) delete created.status;
      admit(resource, created);
      write(plural, created, 'ADDED');
      return json(res, 201, created);
    }
    if (name === undefined) return status(res, 405, 'MethodNotAllowed', `${method} is not allowed on a collection`);

    const existing = items.get(keyOf(namespace, name));
    if (!existing) return status(res, 404, 'NotFound', `${plural} "${name}" not found`);
    if (subresource !== undefined && (subresource !== 'status' || !resource.statusSubresource)) {
      return status(res, 404, 'NotFound', `${plural} has no subresource ${subresource}`);
    }

    if (method === 'GET') return json(res, 200, existing);
    if (method === 'DELETE') return json(res, 200, deleteObject(plural, existing));
    if (method !== 'PUT' && method !== 'PATCH') return status(res, 405, 'MethodNotAllowed', `${method} is not allowed`);

    let incoming: KubeObject;
    if (method === 'PUT') {
      incoming = parseBody(body);
    } else {
      const type = (req.headers['content-type'] ?? '').split(';')[0];
      if (type !== 'application/merge-patch+json') {
        return status(res, 415, 'UnsupportedMediaType', `the fake API server supports only merge patches, not ${type}`);
      }
      incoming = mergePatch(structuredClone(existing), JSON.parse(body)) as KubeObject;
    }
    const wantedVersion = incoming.metadata?.resourceVersion;
    if (wantedVersion && wantedVersion !== existing.metadata.resourceVersion) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const updated = structuredClone(existing);
    if (subresource === 'status') {
      updated.status = incoming.status;
      // Status is validated against the schema too, so the operator's status writes are checked.
      admit(resource, updated);
    } else {
      // The main endpoint owns everything but status (when status is a subresource) and the server-set metadata.
      for (const field of Object.keys(updated)) if (field !== 'metadata' && field !== 'status') delete updated[field];
      for (const [field, value] of Object.entries(incoming)) if (field !== 'metadata' && field !== 'status') updated[field] = value;
      if (!resource.statusSubresource) updated.status = incoming.status;
      for (const field of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
        if (incoming.metadata[field] === undefined) delete updated.metadata[field];
        else (updated.metadata as Record<string, unknown>)[field] = incoming.metadata[field];
      }
      updated.apiVersion = resource.apiVersion;
      updated.kind = resource.kind;
      if (resource.statusSubresource) admit(resource, updated);
      if (JSON.stringify(updated.spec) !== JSON.stringify(existing.spec)) updated.metadata.generation = (existing.metadata.generation ?? 1) + 1;
    }
    if (JSON.stringify(updated) === JSON.stringify(existing)) return json(res, 200, existing);
    if (updated.metadata.deletionTimestamp && (updated.metadata.finalizers ?? []).length === 0) {
      remove(plural, updated);
      return json(res, 200, updated);
    }
    write(plural, updated, 'MODIFIED');
    return json(res, 200, updated);
  };

  const startWatch = (req: http.IncomingMessage, res: http.ServerResponse, plural: string, namespace: string | undefined, params: URLSearchParams) => {
    watchRequests[plural] = (watchRequests[plural] ?? 0) + 1;
    const watcher: Watcher = { plural, namespace, selector: parseSelector(params.get('labelSelector')), res };
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    const from = params.get('resourceVersion');
    if (from === null || from === '' || from === '0') {
      // "Start at most recent": the current state as ADDED events, then changes.
      for (const object of store(plural).values()) {
        if (matchesWatch(watcher, { type: 'ADDED', plural, object, resourceVersion })) send(res, { type: 'ADDED', object });
      }
    } else {
      const since = Number(from);
      if (!Number.isInteger(since) || since < oldestServable) {
        send(res, {
          type: 'ERROR',
          object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: `too old resource version: ${from} (${oldestServable})` },
        });
        res.end();
        return;
      }
      for (const event of history) if (event.resourceVersion > since && matchesWatch(watcher, event)) send(res, { type: event.type, object: event.object });
    }
    if (params.get('allowWatchBookmarks') === 'true') {
      send(res, { type: 'BOOKMARK', object: { apiVersion: resources[plural]?.apiVersion, kind: resources[plural]?.kind, metadata: { resourceVersion: String(resourceVersion) } } });
    }
    watchers.add(watcher);
    res.on('close', () => watchers.delete(watcher));
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfigYaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: fake',
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain HTTP unless TLS verification is off: there is no TLS to verify here.
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: fake',
    '  user:',
    '    token: fake-token',
    'contexts:',
    '- name: fake',
    '  context:',
    '    cluster: fake',
    '    user: fake',
    'current-context: fake',
    '',
  ].join('\n');

  return {
    url,
    kubeconfigYaml,
    kubeConfig() {
      const config = new KubeConfig();
      config.loadFromString(kubeconfigYaml);
      return config;
    },
    get: (plural, namespace, name) => structuredClone(store(plural).get(keyOf(namespace, name))),
    list: (plural, namespace) => [...store(plural).values()].filter((item) => namespace === undefined || item.metadata.namespace === namespace).map((item) => structuredClone(item)),
    compact() {
      history = [];
      oldestServable = resourceVersion + 1;
    },
    dropWatches() {
      for (const watcher of watchers) watcher.res.end();
      watchers.clear();
    },
    watchRequests,
    failNext(count, code, matches = () => true) {
      failures.push({ count, status: code, matches });
    },
    get tokenReviews() {
      return counters.tokenReviews;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const watcher of watchers) watcher.res.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

class ApiError extends Error {
  readonly code: number;
  readonly reason: string;

  constructor(code: number, reason: string, message: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

function crdResource(file: string): Omit<Resource, 'kind'> {
  // Parsed as plain YAML: client-node's loadYaml maps fields to its models (`default` becomes `_default`).
  const crd = parseYaml(readFileSync(path.join(CRD_DIR, file), 'utf8')) as {
    spec: { group: string; versions: Array<{ name: string; schema: { openAPIV3Schema: object } }> };
  };
  const version = crd.spec.versions[0] as { name: string; schema: { openAPIV3Schema: object } };
  const validate = crdAjv().compile(version.schema.openAPIV3Schema);
  return { apiVersion: `${crd.spec.group}/${version.name}`, namespaced: true, statusSubresource: true, validate };
}

function admit(resource: Resource, object: KubeObject): void {
  if (!resource.validate) return;
  const { metadata, ...rest } = object;
  const candidate = { ...rest, metadata: {} };
  if (!resource.validate(candidate)) {
    const details = (resource.validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`).join('; ');
    throw new ApiError(422, 'Invalid', `${resource.kind}.${resource.apiVersion} "${metadata.name}" is invalid: ${details}`);
  }
  // Defaults applied by ajv (useDefaults) are kept, as the real server persists them.
  Object.assign(object, { ...candidate, metadata });
}

function parsePath(pathname: string): { plural: string; namespace: string | undefined; name: string | undefined; subresource: string | undefined } | undefined {
  const match =
    /^\/(?:api\/v1|apis\/viewfinder\.dev\/v1alpha1|apis\/coordination\.k8s\.io\/v1|apis\/discovery\.k8s\.io\/v1)(?:\/namespaces\/([^/]+))?\/(sites|apikeys|pagemonitors|secrets|events|leases|endpointslices)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(
      pathname,
    );
  if (!match) return undefined;
  const plural = match[2] as string;
  const group = pathname.startsWith('/api/v1') ? 'core' : (/^\/apis\/([^./]+)/.exec(pathname)?.[1] ?? '');
  const expected = plural === 'sites' || plural === 'apikeys' || plural === 'pagemonitors' ? 'viewfinder' : plural === 'leases' ? 'coordination' : plural === 'endpointslices' ? 'discovery' : 'core';
  if (group !== expected) return undefined;
  return { plural, namespace: match[1], name: match[3] ? decodeURIComponent(match[3]) : undefined, subresource: match[4] };
}

function parseBody(body: string): KubeObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ApiError(400, 'BadRequest', 'the body is not JSON');
  }
  const object = parsed as KubeObject;
  if (typeof object !== 'object' || object === null || typeof object.metadata?.name !== 'string' || object.metadata.name === '') {
    throw new ApiError(422, 'Invalid', 'metadata.name: Required value');
  }
  return object;
}

function parseSelector(selector: string | null): Record<string, string> {
  const terms: Record<string, string> = {};
  for (const term of (selector ?? '').split(',')) {
    const [key, value] = term.split('=');
    if (key && value !== undefined) terms[key.trim()] = value.trim();
  }
  return terms;
}

function labelsMatch(object: KubeObject, selector: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => object.metadata.labels?.[key] === value);
}

function matchesWatch(watcher: Watcher, event: HistoryEvent): boolean {
  return (
    watcher.plural === event.plural &&
    (watcher.namespace === undefined || event.object.metadata.namespace === watcher.namespace) &&
    labelsMatch(event.object, watcher.selector)
  );
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function send(res: http.ServerResponse, event: object): void {
  res.write(`${JSON.stringify(event)}\n`);
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  json(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}
