/**
 * The OpenAPI tools the document is checked with: Redocly's linter (@redocly/openapi-core) and
 * openapi-typescript. They are devDependencies; until a checkout has them, OPENAPI_TOOLS_DIR may
 * name a node_modules that does (after `npm install --prefix /tmp/oas --ignore-scripts
 * @redocly/openapi-core openapi-typescript`: OPENAPI_TOOLS_DIR=/tmp/oas/node_modules).
 * Missing tools fail the test that needs them, loudly, rather than skip it.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer?: string }[];
}

export interface Redocly {
  createConfig(config: object): Promise<unknown>;
  lintFromString(options: { source: string; absoluteRef: string; config: unknown }): Promise<LintProblem[]>;
}

export interface OpenApiTypeScript {
  openapiTS(schema: object): Promise<unknown>;
  astToString(ast: unknown): string;
}

async function load(name: string): Promise<Record<string, unknown>> {
  try {
    return (await import(name)) as Record<string, unknown>;
  } catch (err) {
    const dir = process.env.OPENAPI_TOOLS_DIR;
    if (!dir) throw new Error(`${name} is not installed: add it to devDependencies, or set OPENAPI_TOOLS_DIR to a node_modules that has it (${String(err)})`);
    return (await import(pathToFileURL(createRequire(path.join(dir, 'index.js')).resolve(name)).href)) as Record<string, unknown>;
  }
}

export async function loadRedocly(): Promise<Redocly> {
  return (await load('@redocly/openapi-core')) as unknown as Redocly;
}

export async function loadOpenApiTypeScript(): Promise<OpenApiTypeScript> {
  const module = await load('openapi-typescript');
  // The ESM build exports openapiTS as default; the CommonJS one, loaded from ESM, nests it once more.
  const inner = (module.default ?? {}) as Record<string, unknown>;
  const openapiTS = (typeof module.default === 'function' ? module.default : inner.default) as OpenApiTypeScript['openapiTS'];
  const astToString = (module.astToString ?? inner.astToString) as OpenApiTypeScript['astToString'];
  return { openapiTS, astToString };
}
