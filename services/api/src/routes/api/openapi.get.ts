import { openApiDocument } from './openapi.ts';
import type { ApiRoute } from './route.ts';

/** GET /api/openapi.json: public, built once from the routes it describes (itself included). */
export function openApiRoute(routes: () => readonly ApiRoute[], version: string): ApiRoute {
  let document: unknown;
  return {
    method: 'GET',
    path: '/api/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    tag: 'Documentation',
    access: 'public',
    responses: { 200: { description: 'The OpenAPI 3.1 document', schema: { type: 'object' } } },
    handler: () => (ctx) => {
      document ??= openApiDocument(routes(), version);
      ctx.body = document;
    },
  };
}
