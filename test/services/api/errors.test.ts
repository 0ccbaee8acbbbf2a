import { expect } from 'chai';
import request from 'supertest';
import type Koa from 'koa';
import { closedPort, startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, sharedRenderer, startRenderer, testConfig } from '../../support/harness.ts';

/** Every failure but 401 answers `{ success: false, error }` and nothing else (SPEC 7). */
function expectErrorShape(response: request.Response, status: number, pattern: RegExp): void {
  expect(response.status, JSON.stringify(response.body)).to.equal(status);
  expect(response.type).to.equal('application/json');
  expect(response.body).to.have.all.keys('success', 'error');
  expect(response.body.success).to.equal(false);
  expect(response.body.error).to.match(pattern);
}

describe('POST /screenshot error responses', () => {
  let fixtures: FixtureServer;
  let app: Koa;

  before(async () => {
    fixtures = await startFixtureServer();
    app = appWith(await sharedRenderer());
  });
  after(() => fixtures.close());

  const post = (body: unknown) =>
    request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body as object);

  describe('400 Bad Request', () => {
    it('says the URL is required when url is missing', async () => {
      expectErrorShape(await post({}), 400, /^URL is required$/);
    });

    it('says the URL is required when the body is empty', async () => {
      const response = await request(app.callback()).post('/screenshot').set('Content-Type', 'application/json');
      expectErrorShape(response, 400, /URL is required/);
    });

    for (const url of ['not a url', 'ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,hi', '//example.com', 'http://', ' http://example.com', 42, null]) {
      it(`rejects url ${JSON.stringify(url)} as not a valid http(s) URL`, async () => {
        expectErrorShape(await post({ url }), 400, /Invalid URL: a valid http or https URL is required/);
      });
    }

    it('rejects a URL longer than the limit', async () => {
      expectErrorShape(await post({ url: `http://example.com/${'a'.repeat(9000)}` }), 400, /Invalid URL: longer than 8192/);
    });

    it('rejects an unknown quality', async () => {
      expectErrorShape(await post({ url: fixtures.url('/simple'), quality: 'ultra' }), 400, /quality must be one of standard, high, retina, mobile/);
    });

    for (const wait of [999, 8001, '2000', -1, true]) {
      it(`rejects wait ${JSON.stringify(wait)}`, async () => {
        expectErrorShape(await post({ url: fixtures.url('/simple'), wait }), 400, /wait must be a number of milliseconds from 1000 to 8000/);
      });
    }

    for (const field of ['fullPage', 'removeAds']) {
      it(`rejects a non-boolean ${field}`, async () => {
        expectErrorShape(await post({ url: fixtures.url('/simple'), [field]: 'yes' }), 400, new RegExp(`${field} must be a boolean`));
      });
    }

    it('names an unknown field', async () => {
      expectErrorShape(await post({ url: fixtures.url('/simple'), colour: 'red' }), 400, /Unknown field: "colour"/);
    });

    it('reports every problem at once', async () => {
      const response = await post({ quality: 'ultra', extra: 1 });
      expectErrorShape(response, 400, /URL is required/);
      expect(response.body.error).to.match(/quality must be one of/).and.match(/Unknown field: "extra"/);
    });

    it('rejects a JSON body that is not an object', async () => {
      expectErrorShape(await post([fixtures.url('/simple')]), 400, /Request body must be a JSON object/);
    });

    it('rejects malformed JSON', async () => {
      const response = await request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send('{"url": "http://x",');
      expectErrorShape(response, 400, /^Malformed JSON body/);
    });
  });

  it('413 when the body is over the limit (64 KiB)', async () => {
    const response = await post({ url: fixtures.url('/simple'), padding: 'x'.repeat(70 * 1024) });
    expectErrorShape(response, 413, /Request body too large: the limit is 65536 bytes/);
  });

  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    it(`415 for Content-Type ${type}`, async () => {
      const response = await request(app.callback()).post('/screenshot').set('Content-Type', type).send('url=http://example.com');
      expectErrorShape(response, 415, /Content-Type must be application\/json/);
    });
  }

  it('415 when Content-Type is missing', async () => {
    const response = await request(app.callback()).post('/screenshot').send(Buffer.from('{"url":"http://example.com"}'));
    expectErrorShape(response, 415, /Content-Type must be application\/json/);
  });

  it('accepts application/json with a charset', async () => {
    const response = await request(app.callback())
      .post('/screenshot')
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(JSON.stringify({ url: fixtures.url('/simple') }));
    expect(response.status).to.equal(200);
  });

  it('404 for an unknown route', async () => {
    expectErrorShape(await request(app.callback()).get('/nope'), 404, /Not found/);
  });

  it('404 for the hosted path in self-hosted mode', async () => {
    expectErrorShape(await request(app.callback()).post('/api/screenshot').send({}), 404, /Not found/);
  });

  for (const method of ['get', 'put', 'delete', 'patch'] as const) {
    it(`405 with an Allow header for ${method.toUpperCase()} /screenshot`, async () => {
      const response = await request(app.callback())[method]('/screenshot');
      expectErrorShape(response, 405, /Method not allowed: use POST/);
      expect(response.headers.allow).to.equal('POST');
    });
  }

  it('405 for POST /healthz', async () => {
    const response = await request(app.callback()).post('/healthz');
    expectErrorShape(response, 405, /Method not allowed/);
    expect(response.headers.allow).to.equal('GET, HEAD');
  });

  it('500 saying generation failed when the page cannot be loaded', async () => {
    const response = await post({ url: `http://127.0.0.1:${await closedPort()}/` });
    expectErrorShape(response, 500, /^Screenshot generation failed: net::ERR_CONNECTION_REFUSED$/);
  });

  describe('408 Request Timeout', () => {
    let slowApp: Koa;
    before(async () => {
      const env = { NAVIGATION_TIMEOUT_MS: '1000', RENDER_CONCURRENCY: '1' };
      slowApp = appWith(await startRenderer(testConfig(env)), env);
    });

    it('says navigation timed out when the page answers after NAVIGATION_TIMEOUT_MS', async () => {
      const response = await request(slowApp.callback())
        .post('/screenshot')
        .set('Content-Type', 'application/json')
        .send({ url: fixtures.url('/slow?delay=5000') });
      expectErrorShape(response, 408, /^Navigation timeout/);
    });

    it('the pool still captures after a timeout', async () => {
      const response = await request(slowApp.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url: fixtures.url('/simple') });
      expect(response.status).to.equal(200);
    });
  });
});

describe('probes', () => {
  it('GET /healthz answers 200', async () => {
    const app = appWith(await sharedRenderer());
    const response = await request(app.callback()).get('/healthz');
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz answers 200 once the pool is ready', async () => {
    const app = appWith(await sharedRenderer());
    const response = await request(app.callback()).get('/readyz');
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({ status: 'ready' });
  });
});
