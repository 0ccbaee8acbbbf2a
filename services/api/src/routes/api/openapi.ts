import type { ApiRoute, JsonSchema } from './route.ts';
import { errorSchema, unauthorizedSchema } from './schemas.ts';

/**
 * Builds the OpenAPI 3.1 document from the routes' own descriptions. Request bodies are the
 * schema objects the handlers validate with; OpenAPI 3.1 speaks JSON Schema, so they go in as is.
 */
export function openApiDocument(routes: readonly ApiRoute[], version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const pathParameters = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const parameters = [...pathParameters, ...(route.parameters ?? [])];
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(route.access === 'public' ? { security: [] } : route.access === 'operator' ? { security: [{ serviceAccountToken: [] }] } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: route.body } } } } : {}),
      responses: { ...successResponses(route), ...errorResponses(route, pathParameters.length > 0) },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Viewfinder hosted API',
      version,
      description:
        'Screenshots as JSON, for accounts with sites and API keys. Every error is JSON: `{"success": false, "error": "..."}`, except 401, which is `{"error": "..."}`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Relative: the paths are on the service that serves this document. Absolute URLs come from
    // configuration, never from a request's Host, and the API has no public base URL setting.
    servers: [{ url: '/', description: 'The service that serves this document' }],
    tags: [
      { name: 'Screenshots', description: 'Captures answered in the same request: POST /api/screenshot, and GET /api/render for signed links.' },
      { name: 'Sites', description: "An account's sites and their allowed domains." },
      { name: 'API keys', description: 'Full-access and site keys; a key is shown once, when it is made or regenerated.' },
      { name: 'Usage', description: 'Captures, failures and bytes by site, key and monitor.' },
      { name: 'Documentation', description: 'This document.' },
      { name: 'Captures', description: 'Asynchronous captures: a 202 at once, the result later, and a signed webhook.' },
      { name: 'Operator', description: "For the Kubernetes operator: objects looked up by the resource that owns them. Authenticated by a trusted ServiceAccount's token, not an API key." },
      { name: 'Monitors', description: 'Pages captured on a schedule and compared with a baseline.' },
      { name: 'Storage', description: "Storage destinations: the account's S3-compatible buckets, registered once, that captures can be written to (the storage option)." },
    ],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A key issued by POST /api/keys or `viewfinder accounts create`.' },
        serviceAccountToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A Kubernetes ServiceAccount token for the audience OPERATOR_TOKEN_AUDIENCE (default viewfinder-api), checked with a TokenReview; only the ServiceAccounts in OPERATOR_SERVICE_ACCOUNTS are admitted.',
        },
      },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}

function successResponses(route: ApiRoute): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(route.responses).map(([status, response]) => [
      status,
      {
        description: response.description,
        ...(response.headers ? { headers: response.headers } : {}),
        ...(response.schema || response.alternatives
          ? {
              content: {
                ...(response.schema ? { 'application/json': { schema: response.schema } } : {}),
                ...Object.fromEntries(Object.entries(response.alternatives ?? {}).map(([type, schema]) => [type, { schema }])),
              },
            }
          : {}),
      },
    ]),
  );
}

function errorResponses(route: ApiRoute, hasPathParameters: boolean): Record<string, JsonSchema> {
  const errors: Record<number, string> = {};
  if (route.body) {
    errors[400] = 'The body is invalid; the error names every problem';
    errors[413] = 'The body is too large';
    errors[415] = 'Content-Type is not application/json';
  }
  if (route.access === 'operator') {
    errors[401] = 'The ServiceAccount token is missing, or not valid for this audience';
    errors[403] = 'The token belongs to a ServiceAccount the API does not trust';
    errors[503] = 'The Kubernetes API could not review the token';
  } else if (route.access !== 'public') errors[401] = 'The API key is missing or invalid';
  if (route.access === 'full-access') errors[403] = 'The key is scoped to a site; this operation needs a full-access key';
  if (hasPathParameters) errors[404] = 'Not found';
  Object.assign(errors, route.errors);
  const json = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });
  return Object.fromEntries(
    Object.entries(errors).map(([status, description]) => [
      status,
      {
        description,
        ...json(status === '401' ? unauthorizedSchema : errorSchema),
        ...(status === '429' ? { headers: rateLimitHeaders() } : {}),
      },
    ]),
  );
}

function rateLimitHeaders(): JsonSchema {
  const integer = (description: string) => ({ description, schema: { type: 'integer' } });
  return {
    'Retry-After': integer('Seconds until a request may succeed'),
    'RateLimit-Limit': integer('Captures allowed per window'),
    'RateLimit-Remaining': integer('Captures left in this window'),
    'RateLimit-Reset': integer('Seconds until the window resets'),
  };
}
