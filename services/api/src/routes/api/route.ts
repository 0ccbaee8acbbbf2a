import type { Middleware } from 'koa';
import type { Logger } from '../../../../../lib/logger.ts';
import type { Store } from '../../../../../lib/store/store.ts';
import type { Renderer } from '../../../../renderer/src/renderer.ts';
import type { Access } from '../../auth/hosted-key.ts';
import type { RateLimiter } from '../../rate-limit.ts';
import type { MonitorService } from '../../monitors/service.ts';
import type { ResultCache } from '../../result-cache/result-cache.ts';
import type { CaptureJobs } from '../../captures/service.ts';
import type { StorageDelivery } from '../../storage/delivery.ts';

/**
 * A hosted route describes itself: app.ts mounts it (auth, JSON body, handler) and openapi.ts
 * documents it, both from this one description. `body` is the very schema object the handler
 * validates with, so the document cannot drift from what the API accepts.
 */
export interface HostedDeps {
  store: Store;
  renderer: Renderer;
  limiter: RateLimiter;
  logger: Logger;
  /** Results kept for requests with a cacheTtl; without one every such request renders. */
  resultCache?: ResultCache | undefined;
  /** Asynchronous captures (POST /api/captures); absent when ASYNC_CAPTURES is off. */
  captures?: CaptureJobs | undefined;
  /** Page monitors' scheduler and pictures; without it the monitor routes answer 503. */
  monitors?: MonitorService | undefined;
  /** Storage destinations: their endpoint checks and the uploads of captures asked to go there. */
  storage: StorageDelivery;
}

export type JsonSchema = Record<string, unknown>;

export interface RouteResponse {
  description: string;
  schema?: JsonSchema;
  /** Other representations of the same answer, chosen by Accept: media type → its schema. */
  alternatives?: Record<string, JsonSchema>;
  /** Response headers: name → description and schema. */
  headers?: Record<string, JsonSchema>;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Koa-router syntax: `/api/sites/:siteId`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'Screenshots' | 'Sites' | 'API keys' | 'Usage' | 'Documentation' | 'Captures' | 'Operator' | 'Monitors' | 'Storage';
  /** 'operator': a trusted Kubernetes ServiceAccount's token (auth/operator-token.ts), not an API key. */
  access: Access | 'public' | 'operator';
  body?: JsonSchema;
  /** Query parameters, as OpenAPI parameter objects. */
  parameters?: JsonSchema[];
  /** Success answers; the error answers are derived from access, body and path parameters. */
  responses: Record<number, RouteResponse>;
  /** Errors this route can answer beyond the derived ones, e.g. 404 or 409. */
  errors?: Record<number, string>;
  handler(deps: HostedDeps): Middleware;
}

/** A path parameter; koa-router guarantees it is present on a matched route. */
export function param(params: Record<string, string>, name: string): string {
  return params[name] ?? '';
}
