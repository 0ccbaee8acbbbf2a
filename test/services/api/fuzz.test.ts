import { expect } from 'chai';
import fc from 'fast-check';
import type Koa from 'koa';
import request from 'supertest';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, sharedRenderer } from '../../support/harness.ts';

/**
 * Property-based fuzzing of POST /screenshot with random and malformed payloads: whatever comes
 * in, the answer is one of the documented JSON shapes, and the service stays ready.
 */
describe('POST /screenshot fuzzed (fast-check, real Chromium)', function () {
  this.timeout(180_000);
  let fixtures: FixtureServer;
  let app: Koa;
  before(async () => {
    fixtures = await startFixtureServer();
    app = appWith(await sharedRenderer());
  });
  after(() => fixtures.close());

  const DOCUMENTED_STATUSES = [200, 400, 403, 408, 413, 415, 429, 500];

  function expectDocumentedShape(response: request.Response): void {
    const summary = `${response.status} ${JSON.stringify(response.body).slice(0, 200)}`;
    expect(response.type, summary).to.equal('application/json');
    expect(DOCUMENTED_STATUSES, summary).to.include(response.status);
    if (response.status === 200) {
      expect(response.body.success, summary).to.equal(true);
      expect(response.body.image, summary).to.match(/^data:image\/png;base64,/);
      for (const field of ['width', 'height', 'fileSize', 'processingTimeMs']) expect(response.body[field], field).to.be.a('number');
    } else {
      expect(Object.keys(response.body).sort(), summary).to.deep.equal(['error', 'success']);
      expect(response.body.success, summary).to.equal(false);
      expect(response.body.error, summary).to.be.a('string').and.not.equal('');
    }
  }

  // URLs: a few that render, many that must be refused for one reason or another. No public host:
  // `.invalid` never resolves (RFC 6761), so fuzzing never leaves the machine.
  const urls = () =>
    fc.oneof(
      { weight: 1, arbitrary: fc.constantFrom(fixtures.url('/simple'), fixtures.url('/geometry'), fixtures.url('/redirect?to=/simple')) },
      { weight: 2, arbitrary: fc.domain().map((domain) => `http://${domain}.invalid/`) },
      { weight: 2, arbitrary: fc.constantFrom('http://169.254.169.254/', 'http://10.1.2.3/', 'http://[fd00::1]/', 'http://0x0a.1/', 'http://[::ffff:10.0.0.1]/') },
      { weight: 2, arbitrary: fc.constantFrom('file:///etc/passwd', 'javascript:alert(1)', 'data:,x', 'ftp://x.invalid/', 'chrome://gpu', ' http://x.invalid', 'http://', 'http:///x') },
      { weight: 3, arbitrary: fc.string({ maxLength: 50 }) },
      { weight: 1, arbitrary: fc.string({ minLength: 8200, maxLength: 9000 }).map((tail) => `http://x.invalid/${tail}`) },
      { weight: 2, arbitrary: fc.anything() },
    );

  const screenshotBodies = () =>
    fc.record(
      {
        url: urls(),
        quality: fc.oneof(fc.constantFrom('standard', 'high', 'retina', 'mobile'), fc.anything()),
        wait: fc.oneof(fc.integer({ min: 1000, max: 1200 }), fc.double(), fc.integer(), fc.string()),
        fullPage: fc.oneof(fc.boolean(), fc.anything()),
        removeAds: fc.oneof(fc.boolean(), fc.anything()),
        site_id: fc.string(),
        extra: fc.anything(),
      },
      { requiredKeys: [] },
    );

  const validBodies = () =>
    fc.record(
      {
        url: fc.oneof(
          fc.constantFrom(fixtures.url('/simple'), fixtures.url('/geometry'), fixtures.url('/tall?height=900')),
          fc.constantFrom('http://169.254.169.254/', 'http://10.1.2.3/', 'http://[fd00::1]/', 'http://0x0a.1/', 'http://[::ffff:10.0.0.1]/'),
          fc.domain().map((domain) => `https://${domain}.invalid/`),
        ),
        quality: fc.constantFrom('standard', 'high', 'mobile'),
        fullPage: fc.boolean(),
        removeAds: fc.boolean(),
      },
      { requiredKeys: ['url'] },
    );

  const payloads = () =>
    fc.oneof(
      { weight: 5, arbitrary: screenshotBodies().map((body) => JSON.stringify(body)) },
      { weight: 1, arbitrary: validBodies().map((body) => JSON.stringify(body)) },
      { weight: 2, arbitrary: fc.json() },
      { weight: 2, arbitrary: fc.string() },
      { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
      { weight: 1, arbitrary: fc.nat({ max: 5000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`) },
      { weight: 1, arbitrary: fc.integer({ min: 65_000, max: 70_000 }).map((size) => JSON.stringify({ url: 'x'.repeat(size) })) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')) },
    );

  const contentTypes = fc.constantFrom(
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
  );

  it('answers every payload with a documented JSON shape', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(payloads(), contentTypes, async (payload, contentType) => {
        const response = await request(app.callback()).post('/screenshot').set('Content-Type', contentType).send(payload);
        expectDocumentedShape(response);
        seen.add(response.status);
      }),
      {
        numRuns: 300,
        // One sure case per kind of answer, run first, so the coverage check below never depends on
        // what the random runs happen to draw.
        examples: [
          [JSON.stringify({ url: fixtures.url('/simple') }), 'application/json'], // 200
          [JSON.stringify({ url: 'ftp://x.invalid/' }), 'application/json'], // 400
          [JSON.stringify({ url: 'http://169.254.169.254/' }), 'application/json'], // 403
          [JSON.stringify({ url: 'x'.repeat(70_000) }), 'application/json'], // 413
          [JSON.stringify({ url: fixtures.url('/simple') }), 'text/plain'], // 415
          [JSON.stringify({ url: 'http://never-resolves.invalid/' }), 'application/json'], // 500
        ],
      },
    );
    // The run exercised real captures and every kind of refusal, not only one of them.
    expect([...seen]).to.include.members([200, 400, 403, 413, 415, 500]);
  });

  it('answers every method and path with a documented JSON shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('get', 'put', 'patch', 'delete', 'post'), fc.webPath(), async (method, path) => {
        const response = await request(app.callback())[method as 'get'](path || '/');
        expect(response.type).to.equal('application/json');
        expect([200, 400, 404, 405, 415]).to.include(response.status);
      }),
      { numRuns: 100 },
    );
  });

  it('is still ready afterwards', async () => {
    const response = await request(app.callback()).get('/readyz');
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({ status: 'ready' });
  });
});
