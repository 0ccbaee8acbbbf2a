import { Ajv } from 'ajv';
import { expect } from 'chai';
import { hostedRoutes } from '../../../../services/api/src/routes/api/index.ts';
import { createKeySchema } from '../../../../services/api/src/routes/api/keys.create.ts';
import { hostedSubmitSchemas } from '../../../../services/api/src/routes/api/captures.create.ts';
import { hostedScreenshotBodySchema } from '../../../../services/api/src/routes/api/screenshot.post.ts';
import { createSiteSchema } from '../../../../services/api/src/routes/api/sites.create.ts';
import { updateSiteSchema } from '../../../../services/api/src/routes/api/sites.update.ts';
import { screenshotBodySchema } from '../../../../services/api/src/routes/screenshot.ts';
import { startHosted, type HostedHarness } from './support.ts';

type Operation = { requestBody?: { content: { 'application/json': { schema: object } } }; responses: Record<string, { content?: { 'application/json': { schema: object } } }> };

describe('GET /api/openapi.json (hosted)', () => {
  let hosted: HostedHarness;
  let document: { openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, object> } };

  before(async () => {
    hosted = await startHosted();
    const response = await hosted.api().get('/api/openapi.json');
    expect(response.status).to.equal(200);
    document = response.body;
  });
  after(() => hosted.close());

  const operation = (method: string, path: string): Operation => {
    const found = document.paths[path]?.[method];
    if (!found) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
    return found;
  };
  const requestSchema = (method: string, path: string) => operation(method, path).requestBody?.content['application/json'].schema;
  const responseSchema = (method: string, path: string, status: number) => operation(method, path).responses[status]?.content?.['application/json'].schema as object;

  it('is an OpenAPI 3.1 document, served without a key, with the X-API-Key scheme', () => {
    expect(document.openapi).to.equal('3.1.0');
    expect(document.components.securitySchemes.apiKey).to.deep.include({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('documents every hosted route with its method, and nothing else', () => {
    const documented = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    const mounted = hostedRoutes('test').map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(documented).to.have.members(mounted);
    expect(documented).to.include.members(['POST /api/screenshot', 'PATCH /api/sites/{siteId}', 'POST /api/keys/{keyId}/regenerate']);
  });

  it('carries the very schemas the routes validate with', () => {
    expect(requestSchema('post', '/api/screenshot')).to.deep.equal(JSON.parse(JSON.stringify(hostedScreenshotBodySchema)));
    expect(requestSchema('post', '/api/sites')).to.deep.equal(JSON.parse(JSON.stringify(createSiteSchema)));
    expect(requestSchema('patch', '/api/sites/{siteId}')).to.deep.equal(JSON.parse(JSON.stringify(updateSiteSchema)));
    expect(requestSchema('post', '/api/keys')).to.deep.equal(JSON.parse(JSON.stringify(createKeySchema)));
  });

  it('documents asynchronous captures: the submit body in both forms, 202 with Location, and the status with its image alternatives', () => {
    expect(requestSchema('post', '/api/captures')).to.deep.equal(JSON.parse(JSON.stringify(hostedSubmitSchemas.either)));
    const single = (requestSchema('post', '/api/captures') as { anyOf: { properties: object }[] }).anyOf[0]!;
    // An asynchronous capture answers no report (its status holds the image alone): report is the one field it leaves out.
    const synchronousOnly = new Set(['report']);
    expect(Object.keys(single.properties)).to.deep.equal([...Object.keys(hostedScreenshotBodySchema.properties).filter((name) => !synchronousOnly.has(name)), 'webhookUrl', 'idempotencyKey']);
    const submit = operation('post', '/api/captures').responses as Record<string, { headers?: object }>;
    expect(Object.keys(submit)).to.include.members(['202', '400', '401', '403', '404', '409', '429']);
    expect(submit['202']!.headers).to.have.property('Location');
    const status = operation('get', '/api/captures/{captureId}').responses as Record<string, { content?: Record<string, unknown> }>;
    expect(Object.keys(status['200']!.content!)).to.include.members(['application/json', 'image/png', 'image/jpeg', 'image/webp']);
    expect(Object.keys(status)).to.include.members(['401', '404', '406', '409']);
  });

  it('extends the self-hosted body schema with site_id and storage (destinations are an account\'s), and only those', () => {
    const hostedFields = Object.keys((requestSchema('post', '/api/screenshot') as { properties: object }).properties);
    expect(hostedFields).to.deep.equal([...Object.keys(screenshotBodySchema.properties), 'site_id', 'storage']);
  });

  it('documents the hosted errors of the capture route, with 401 as an error-only body', () => {
    const responses = operation('post', '/api/screenshot').responses;
    expect(Object.keys(responses)).to.include.members(['200', '400', '401', '403', '404', '408', '429', '500']);
    expect(responseSchema('post', '/api/screenshot', 401)).to.deep.include({ required: ['error'], additionalProperties: false });
  });

  it('documents the raw image answers by Accept, their headers, and 406', () => {
    const ok = operation('post', '/api/screenshot').responses[200] as unknown as { content: Record<string, object>; headers: Record<string, object> };
    expect(Object.keys(ok.content)).to.have.members(['application/json', 'image/png', 'image/jpeg', 'image/webp', 'application/pdf']);
    expect(ok.headers).to.include.keys('Viewfinder-Cache', 'Viewfinder-Width', 'Viewfinder-Height', 'Viewfinder-Processing-Time-Ms');
    expect(operation('post', '/api/screenshot').responses).to.have.property('406');
  });

  it('documents format pdf and its options in the request body', () => {
    type Schema = { enum?: string[]; properties?: Record<string, Schema>; additionalProperties?: boolean };
    const body = operation('post', '/api/screenshot').requestBody as unknown as { content: { 'application/json': { schema: Schema } } };
    const properties = body.content['application/json'].schema.properties ?? {};
    const pdf = properties.pdf?.properties ?? {};
    expect(properties.format?.enum).to.include('pdf');
    expect(pdf.paper?.enum).to.deep.equal(['A4', 'Letter', 'Legal']);
    expect(pdf.emulateMedia?.enum).to.have.members(['print', 'screen']);
    expect(Object.keys(pdf.margin?.properties ?? {})).to.have.members(['top', 'right', 'bottom', 'left']);
    expect(properties.pdf?.additionalProperties).to.equal(false);
  });

  it('describes the answers the API actually gives', async () => {
    const ajv = new Ajv({ strict: false, validateFormats: false });
    const admin = hosted.api(hosted.fullKey);
    const checks: [string, string, number, unknown][] = [];
    const site = await admin.post('/api/sites', { allowedDomains: ['example.com'] });
    checks.push(['post', '/api/sites', 201, site.body]);
    checks.push(['get', '/api/sites', 200, (await admin.get('/api/sites')).body]);
    checks.push(['patch', '/api/sites/{siteId}', 200, (await admin.patch(`/api/sites/${site.body.id}`, { allowedDomains: [] })).body]);
    const key = await admin.post('/api/keys', { name: 'k', siteId: site.body.id, restrictDomains: true });
    checks.push(['post', '/api/keys', 201, key.body]);
    checks.push(['get', '/api/keys', 200, (await admin.get('/api/keys')).body]);
    checks.push(['post', '/api/keys/{keyId}/regenerate', 200, (await admin.post(`/api/keys/${key.body.id}/regenerate`)).body]);
    checks.push(['get', '/api/usage', 200, (await admin.get('/api/usage')).body]);
    checks.push(['delete', '/api/keys/{keyId}', 200, (await admin.delete(`/api/keys/${key.body.id}`)).body]);
    checks.push(['post', '/api/screenshot', 401, (await hosted.api().post('/api/screenshot', {})).body]);
    checks.push(['post', '/api/screenshot', 400, (await admin.post('/api/screenshot', {})).body]);
    for (const [method, path, status, body] of checks) {
      const validate = ajv.compile(responseSchema(method, path, status));
      expect(validate(body), `${method.toUpperCase()} ${path} ${status}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    }
  });
});
