import { expect } from 'chai';
import request from 'supertest';
import type Koa from 'koa';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, sharedRenderer } from '../../support/harness.ts';

const KEY = 'sk_test_9c1f0a3b7d2e4f60';

describe('self-hosted authentication (API_KEY)', () => {
  let fixtures: FixtureServer;
  let body: { url: string };

  before(async () => {
    fixtures = await startFixtureServer();
    body = { url: fixtures.url('/simple') };
  });
  after(() => fixtures.close());

  describe('when API_KEY is set', () => {
    let app: Koa;
    before(async () => {
      app = appWith(await sharedRenderer(), { API_KEY: KEY });
    });
    const post = () => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json');

    it('accepts the key in X-API-Key', async () => {
      const response = await post().set('X-API-Key', KEY).send(body);
      expect(response.status).to.equal(200);
      expect(response.body.success).to.equal(true);
    });

    it('accepts the key as Authorization: Bearer', async () => {
      const response = await post().set('Authorization', `Bearer ${KEY}`).send(body);
      expect(response.status).to.equal(200);
    });

    const rejected: [string, Record<string, string>][] = [
      ['no key', {}],
      ['a wrong X-API-Key', { 'X-API-Key': `${KEY}x` }],
      ['a prefix of the key', { 'X-API-Key': KEY.slice(0, -1) }],
      ['a wrong bearer token', { Authorization: 'Bearer nope' }],
      ['the key under another scheme', { Authorization: `Basic ${KEY}` }],
      ['an empty bearer', { Authorization: 'Bearer ' }],
    ];
    for (const [name, headers] of rejected) {
      it(`answers 401 with only an error field for ${name}`, async () => {
        const response = await post().set(headers).send(body);
        expect(response.status).to.equal(401);
        expect(response.body).to.have.all.keys('error');
        expect(response.body.error).to.match(/^Invalid API key/);
      });
    }

    it('checks the key before the body: a bad body without a key is still 401', async () => {
      const response = await post().send({ nonsense: true });
      expect(response.status).to.equal(401);
    });

    it('never echoes a presented key', async () => {
      const response = await post().set('X-API-Key', 'vf_leak_me_please').send(body);
      expect(JSON.stringify(response.body)).to.not.include('leak_me');
    });

    it('leaves the probes open', async () => {
      expect((await request(app.callback()).get('/healthz')).status).to.equal(200);
      expect((await request(app.callback()).get('/readyz')).status).to.equal(200);
    });
  });

  describe('when API_KEY is not set', () => {
    let app: Koa;
    before(async () => {
      app = appWith(await sharedRenderer());
    });

    it('needs no key', async () => {
      const response = await request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);
      expect(response.status).to.equal(200);
    });

    it('ignores an X-API-Key that is sent anyway', async () => {
      const response = await request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').set('X-API-Key', 'anything').send(body);
      expect(response.status).to.equal(200);
    });
  });
});
