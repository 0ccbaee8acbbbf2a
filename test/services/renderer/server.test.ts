import { expect } from 'chai';
import request from 'supertest';
import { PNG } from 'pngjs';
import { closedPort, startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { sharedRenderer } from '../../support/harness.ts';
import { pdfInfo, rawBytes } from '../../support/pdf.ts';
import { sampleValue, startRendererService, type RendererService } from '../../support/renderer-service.ts';

const TOKEN = 'renderer-test-token-0123456789';

describe('the renderer service HTTP API (services/renderer/src/server.ts, real Chromium)', () => {
  let fixtures: FixtureServer;
  let open: RendererService;
  let guarded: RendererService;

  before(async () => {
    fixtures = await startFixtureServer();
    const pool = await sharedRenderer();
    open = await startRendererService(pool);
    guarded = await startRendererService(pool, { token: TOKEN });
  });
  after(async () => {
    await Promise.all([open.close(), guarded.close(), fixtures.close()]);
  });

  const captureRequest = (overrides: Record<string, unknown> = {}) => ({
    url: fixtures.url('/geometry'),
    quality: 'standard',
    fullPage: false,
    removeAds: false,
    ...overrides,
  });
  const post = (service: RendererService, body: unknown) =>
    request(service.app.callback()).post('/v1/captures').set('Content-Type', 'application/json').send(body as object);

  describe('POST /v1/captures', () => {
    it('answers the PNG bytes, with width, height, truncated and waitMs in headers', async () => {
      const response = await post(open, captureRequest({ quality: 'mobile' })).buffer(true);
      expect(response.status).to.equal(200);
      expect(response.type).to.equal('image/png');
      const png = PNG.sync.read(response.body as Buffer);
      expect([png.width, png.height]).to.deep.equal([750, 1334]);
      expect(response.headers).to.include({ 'x-image-width': '750', 'x-image-height': '1334', 'x-image-truncated': 'false' });
      expect(Number(response.headers['x-wait-ms'])).to.be.a('number').and.satisfy(Number.isInteger);
      expect(Number(response.headers['content-length'])).to.equal((response.body as Buffer).length);
    });

    it('says a full-page capture was cut at the height cap', async () => {
      const response = await post(open, captureRequest({ url: fixtures.url('/endless'), fullPage: true })).buffer(true);
      expect(response.status).to.equal(200);
      expect(response.headers).to.include({ 'x-image-height': '5000', 'x-image-truncated': 'true' });
    });

    it('answers a failed capture with its typed error: 500 and the network error', async () => {
      const response = await post(open, captureRequest({ url: `http://127.0.0.1:${await closedPort()}/` }));
      expect(response.status).to.equal(500);
      expect(response.body).to.deep.equal({ success: false, error: 'Screenshot generation failed: net::ERR_CONNECTION_REFUSED' });
    });

    it('answers a PDF as application/pdf, its first page in CSS px in the size headers', async () => {
      const response = await post(open, captureRequest({ format: 'pdf', pdf: { paper: 'Letter' } })).buffer(true).parse(rawBytes);
      expect(response.status).to.equal(200);
      expect(response.type).to.equal('application/pdf');
      const info = await pdfInfo(response.body as Buffer);
      expect([info.pages, info.widthPt, info.heightPt]).to.deep.equal([1, 612, 792]);
      expect(response.headers).to.include({ 'x-image-width': '816', 'x-image-height': '1056', 'x-image-truncated': 'false' });
    });

    it("holds to format pdf's rules by itself, whoever calls it", async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ pdf: { landscape: true } }, 'pdf needs format pdf'],
        [{ format: 'pdf', fullPage: true }, 'fullPage does not apply to format pdf'],
        [{ format: 'pdf', selector: 'body' }, 'selector does not apply to format pdf'],
        [{ format: 'pdf', pdf: { pageRanges: '3-1' } }, 'pdf.pageRanges: the range 3-1 runs backwards'],
        [{ format: 'pdf', pdf: { scale: 2 } }, 'pdf must NOT have additional properties'],
      ];
      for (const [overrides, problem] of cases) {
        const response = await post(open, captureRequest(overrides));
        expect(response.status, problem).to.equal(400);
        expect(response.body).to.deep.equal({ success: false, error: `Invalid capture request: ${problem}` });
      }
    });

    it('rejects a request that is not a complete CaptureRequest with a 400 naming the fields', async () => {
      const response = await post(open, { url: 'ftp://example.com/', quality: 'ultra' });
      expect(response.status).to.equal(400);
      expect(response.body.success).to.equal(false);
      expect(response.body.error).to.match(/^Invalid capture request: /);
      for (const problem of ['url must match pattern', 'quality must be equal to one of the allowed values', "must have required property 'fullPage'", "must have required property 'removeAds'"]) {
        expect(response.body.error).to.include(problem);
      }
    });

    it('captures within allowedDomains, and refuses a URL outside them itself with 403, whoever calls it', async () => {
      expect((await post(open, captureRequest({ allowedDomains: ['127.0.0.1'] }))).status).to.equal(200);
      const refused = await post(open, captureRequest({ allowedDomains: ['example.com'] }));
      expect(refused.status).to.equal(403);
      expect(refused.body).to.deep.equal({ success: false, error: 'Domain not allowed: 127.0.0.1 is not among the allowed domains' });
    });

    it('rejects allowedDomains that is not a list of host names with 400', async () => {
      const response = await post(open, captureRequest({ allowedDomains: 'example.com' }));
      expect(response.status).to.equal(400);
      expect(response.body.error).to.include('allowedDomains must be array');
    });

    it('rejects a body that is not JSON with 415', async () => {
      const response = await request(open.app.callback()).post('/v1/captures').set('Content-Type', 'text/plain').send('hello');
      expect(response.status).to.equal(415);
      expect(response.body).to.deep.equal({ success: false, error: 'Content-Type must be application/json, got text/plain' });
    });
  });

  describe('RENDERER_TOKEN', () => {
    it('answers 401 {error} to a capture without the token', async () => {
      const response = await post(guarded, captureRequest());
      expect(response.status).to.equal(401);
      expect(response.body).to.deep.equal({ error: 'Invalid renderer token: none was given' });
    });

    it('answers 401 {error} to a capture with a wrong token', async () => {
      const response = await post(guarded, captureRequest()).set('Authorization', `Bearer ${TOKEN}x`);
      expect(response.status).to.equal(401);
      expect(response.body).to.deep.equal({ error: 'Invalid renderer token' });
    });

    it('captures with the right token', async () => {
      const response = await post(guarded, captureRequest()).set('Authorization', `Bearer ${TOKEN}`);
      expect(response.status).to.equal(200);
      expect(response.type).to.equal('image/png');
    });

    it('leaves probes and /metrics open, for kubelets and Prometheus', async () => {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        expect((await request(guarded.app.callback()).get(path)).status, path).to.equal(200);
      }
    });
  });

  describe('probes and shutdown', () => {
    it('GET /healthz answers ok', async () => {
      const response = await request(open.app.callback()).get('/healthz');
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ status: 'ok' });
    });

    it("GET /readyz answers ready with the pool's stats", async () => {
      const response = await request(open.app.callback()).get('/readyz');
      expect(response.status).to.equal(200);
      expect(response.body.status).to.equal('ready');
      expect(response.body.stats).to.include({ capacity: 2 });
      expect(response.body.stats).to.have.all.keys('capacity', 'inFlight', 'queued', 'browserRestarts', 'browserCrashes');
    });

    it('once shutting down, /readyz answers 503 and new captures 503 with Retry-After', async () => {
      const pool = await sharedRenderer();
      const draining = await startRendererService(pool);
      try {
        draining.shutDown();
        const ready = await request(draining.app.callback()).get('/readyz');
        expect(ready.status).to.equal(503);
        const capture = await post(draining, captureRequest());
        expect(capture.status).to.equal(503);
        expect(capture.headers['retry-after']).to.equal('1');
        expect(capture.body).to.deep.equal({ success: false, error: 'Renderer is shutting down' });
      } finally {
        await draining.close();
      }
    });

    it('answers unknown paths with 404 and wrong methods with 405 and Allow, as JSON', async () => {
      const missing = await request(open.app.callback()).get('/v1/nothing');
      expect(missing.status).to.equal(404);
      expect(missing.body).to.deep.equal({ success: false, error: 'Not found: no such route' });
      const wrongMethod = await request(open.app.callback()).get('/v1/captures');
      expect(wrongMethod.status).to.equal(405);
      expect(wrongMethod.headers.allow).to.equal('POST');
    });
  });

  describe('GET /metrics', () => {
    it('counts captures by profile and outcome, and requests by route template', async () => {
      const service = await startRendererService(await sharedRenderer());
      try {
        await post(service, captureRequest({ quality: 'high' }));
        await post(service, captureRequest({ url: `http://127.0.0.1:${await closedPort()}/` }));
        await request(service.app.callback()).get('/no/such/path/123');

        expect(await sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'high', outcome: 'success' })).to.equal(1);
        expect(await sampleValue(service.registry, 'viewfinder_capture_duration_seconds_count', { profile: 'standard', outcome: 'error' })).to.equal(1);
        expect(await sampleValue(service.registry, 'viewfinder_capture_png_bytes_count', { profile: 'high' })).to.equal(1);
        expect(await sampleValue(service.registry, 'viewfinder_capture_wait_seconds_count', { profile: 'high' })).to.equal(1);
        expect(await sampleValue(service.registry, 'viewfinder_render_capacity')).to.equal(2);

        const text = (await request(service.app.callback()).get('/metrics')).text;
        expect(text).to.match(/^viewfinder_http_request_duration_seconds_count\{route="\/v1\/captures",method="POST",status_class="2xx"\} 1$/m);
        expect(text).to.match(/^viewfinder_http_request_duration_seconds_count\{route="unmatched",method="GET",status_class="4xx"\} 1$/m);
        expect(text).to.not.include('/no/such/path');
        expect(text).to.not.include(fixtures.origin);
      } finally {
        await service.close();
      }
    });
  });
});
