import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { loadOpenApiTypeScript, loadRedocly } from '../../../support/openapi-tools.ts';
import { startHosted, type HostedHarness } from './support.ts';

/**
 * The OpenAPI document is one that real tools accept: Redocly's recommended rules find no error in
 * it, and a client generated from it by openapi-typescript type-checks a call with every visit
 * option (and refuses a wrong one, so the check has teeth). See test/support/openapi-tools.ts for
 * where the tools come from.
 */
describe('GET /api/openapi.json with real OpenAPI tools', () => {
  let hosted: HostedHarness;
  let source: string;
  let dir: string;

  before(async () => {
    hosted = await startHosted();
    const response = await hosted.api().get('/api/openapi.json');
    expect(response.status).to.equal(200);
    source = response.text;
    dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-openapi-'));
  });
  after(async () => {
    await hosted.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes Redocly's recommended lint with no error, and no warning but the one for a route that has no 4xx", async () => {
    const redocly = await loadRedocly();
    const problems = await redocly.lintFromString({ source, absoluteRef: '/api/openapi.json', config: await redocly.createConfig({ extends: ['recommended'] }) });
    const described = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    expect(described.filter((line) => line.startsWith('error')), described.join('\n')).to.deep.equal([]);
    // GET /api/openapi.json is public and answers nothing but 200.
    expect(described).to.deep.equal(['warn operation-4xx-response #/paths/~1api~1openapi.json/get/responses: Operation must have at least one `4XX` response.']);
  });

  const body = `type Body = paths['/api/screenshot']['post']['requestBody']['content']['application/json'];
type Async = paths['/api/captures']['post']['requestBody']['content']['application/json'];`;

  /** The generated client and two calls of it, type-checked in one program (TypeScript's start is the slow part): each file's diagnostics. */
  let diagnostics: Promise<Record<'right' | 'wrong', string[]>> | undefined;
  function typeCheck(): Promise<Record<'right' | 'wrong', string[]>> {
    diagnostics ??= (async () => {
      const { openapiTS, astToString } = await loadOpenApiTypeScript();
      writeFileSync(path.join(dir, 'api.d.ts'), astToString(await openapiTS(JSON.parse(source) as object)));
      const files = { right: path.join(dir, 'right.ts'), wrong: path.join(dir, 'wrong.ts') };
      writeFileSync(files.right, `import type { paths } from './api.d.ts';\n${body}\n${RIGHT}\n`);
      writeFileSync(files.wrong, `import type { paths } from './api.d.ts';\n${body}\n${WRONG}\n`);
      const program = ts.createProgram(Object.values(files), { strict: true, noEmit: true, allowImportingTsExtensions: true, module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2022 });
      const of = (file: string) => ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      return { right: of(files.right), wrong: of(files.wrong) };
    })();
    return diagnostics;
  }

  it('generates a client (openapi-typescript) in which a call with every visit option type-checks', async () => {
    expect((await typeCheck()).right).to.deep.equal([]);
  });

  it('and in which a wrong visit option does not', async () => {
    const { wrong } = await typeCheck();
    expect(wrong.join('\n')).to.match(/"stylesheets"/);
    expect(wrong.join('\n')).to.match(/longitude/);
  });
});

const RIGHT = `
export const login: Body = {
  url: 'https://example.com/account',
  userAgent: 'Mozilla/5.0 (compatible; Example)',
  headers: { 'X-Tenant': 'acme' },
  cookies: [{ name: 'session', value: 'abc123' }],
  authorization: { type: 'basic', username: 'ada', password: 'lovelace' },
  injectCss: '.banner { display: none }',
  injectJs: 'document.title = "x"',
  click: '#show-more',
  blockResources: ['images', 'fonts', 'media', 'scripts'],
  blockUrls: ['*://*.doubleclick.net/*'],
  timezone: 'Europe/Paris',
  locale: 'fr-FR',
  geolocation: { latitude: 48.85, longitude: 2.35, accuracy: 10 },
};
export const bearer: Body = { url: 'https://example.com/', authorization: { type: 'bearer', token: 'eyJhbGciOi' } };
export const document: Body = { html: '<h1>Hello</h1>', injectCss: 'h1 { color: red }' };
export const later: Async = { url: 'https://example.com/', locale: 'de-CH', webhookUrl: 'https://hooks.example.com/' };`;

const WRONG = `export const wrong: Body = { url: 'https://example.com/', blockResources: ['stylesheets'], geolocation: { latitude: 1 } };`;
