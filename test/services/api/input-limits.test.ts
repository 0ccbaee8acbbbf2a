import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { answerClientErrorsAsJson } from '../../../lib/http/client-errors.ts';
import { MAX_JSON_DEPTH, depthOf } from '../../../lib/http/json-body.ts';
import { MAX_URL_LENGTH } from '../../../services/api/src/routes/screenshot.ts';
import { appWith, sharedRenderer } from '../../support/harness.ts';

describe('input limits', () => {
  const post = async (body: string) =>
    request(appWith(await sharedRenderer()).callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);

  describe('JSON depth', () => {
    it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels with 400, before validation`, async () => {
      const deep = `{"url":"http://127.0.0.1/","x":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`;
      const response = await post(deep);
      expect(response.status).to.equal(400);
      expect(response.body).to.deep.equal({ success: false, error: `Malformed JSON body: nested deeper than ${MAX_JSON_DEPTH} levels` });
    });

    it('refuses 30 000 levels (what fits in 64 KiB) the same way, without exhausting the stack', async () => {
      const response = await post(`${'['.repeat(30_000)}${']'.repeat(30_000)}`);
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal(`Malformed JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`);
    });

    it(`lets a body exactly ${MAX_JSON_DEPTH} levels deep reach validation, which names the unknown field`, async () => {
      const response = await post(`{"url":"http://127.0.0.1/","x":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`);
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal('Unknown field: "x"');
    });

    it('measures depth: scalars 0, flat objects 1, each nesting one more', () => {
      expect(depthOf('x')).to.equal(0);
      expect(depthOf(null)).to.equal(0);
      expect(depthOf({ url: 'x' })).to.equal(1);
      expect(depthOf({ a: [{ b: [] }] })).to.equal(4);
    });
  });

  describe('URL length', () => {
    it(`accepts ${MAX_URL_LENGTH} characters at most, which lies within 2048..8192`, () => {
      expect(MAX_URL_LENGTH).to.be.within(2048, 8192);
    });

    it('refuses a longer URL with 400', async () => {
      const url = `http://127.0.0.1/${'a'.repeat(MAX_URL_LENGTH)}`;
      const response = await post(JSON.stringify({ url }));
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal(`Invalid URL: longer than ${MAX_URL_LENGTH} characters`);
    });
  });

  describe('header size', () => {
    let server: http.Server;
    let port: number;
    before(async () => {
      server = http.createServer({ maxHeaderSize: 2048 }, appWith(await sharedRenderer()).callback());
      answerClientErrorsAsJson(server, 2048);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('answers headers over MAX_HEADER_BYTES with a JSON 431', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-padding': 'a'.repeat(4096) } });
      expect(response.status).to.equal(431);
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
      expect(await response.json()).to.deep.equal({ success: false, error: 'Request headers too large: the limit is 2048 bytes' });
    });

    it('still serves requests under the limit', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-padding': 'a'.repeat(512) } });
      expect(response.status).to.equal(200);
    });
  });
});
