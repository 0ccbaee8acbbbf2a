/**
 * The OpenAPI tools the document is checked with: Redocly's linter (@redocly/openapi-core) and
 * openapi-typescript, both devDependencies (neither runs an install script).
 */

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
  return (await import(name)) as Record<string, unknown>;
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
