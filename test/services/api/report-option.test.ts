import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { signRenderLink } from '../../../lib/render-links.ts';
import { createApp } from '../../../services/api/src/app.ts';
import { createRemoteRenderer, type RemoteRenderer } from '../../../services/api/src/remote-renderer.ts';
import { openDiskCache } from '../../../services/api/src/result-cache/disk-cache.ts';
import type { ResultCache } from '../../../services/api/src/result-cache/result-cache.ts';
import { resultAnswer, resultFromResponse } from '../../../services/renderer/src/protocol.ts';
import type { CaptureResult, Renderer } from '../../../services/renderer/src/renderer.ts';
import { describeEachVariant, expectOk } from '../../support/capture-variants.ts';
import type { FixtureServer } from '../../support/fixture-server.ts';
import { HEALTH_CHECKS, startHealthPages } from '../../support/health-pages.ts';
import { sharedRenderer, silentLogger, testConfig } from '../../support/harness.ts';
import { startRendererService, type RendererService } from '../../support/renderer-service.ts';
import { startHosted, type HostedHarness } from './hosted/support.ts';

/** The fields of a screenshot answer before reports existed: a capture without `report` answers exactly these. */
const ANSWER_FIELDS = ['fileSize', 'height', 'image', 'processingTimeMs', 'quality', 'success', 'url', 'waitMs', 'width'];

describe('the report option of a capture (issue #40, real Chromium)', () => {
  let pages: FixtureServer;
  let renderer: Renderer;

  before(async () => {
    pages = await startHealthPages();
    renderer = await sharedRenderer();
  });
  after(() => pages.close());

  describeEachVariant({}, () => renderer, (api, variant) => {
    const hosted = variant.name.startsWith('hosted');

    it('report: true answers the report beside the image', async () => {
      const response = await api.post({ url: pages.url('/console-error'), removeAds: false, report: true });
      expectOk(response);
      expect(response.body.image).to.match(/^data:image\/png;base64,/);
      expect(response.body.report.document).to.deep.equal({ url: pages.url('/console-error'), status: 200, redirects: [] });
      expect(response.body.report.console.errors.items[0]).to.include({ message: 'checkout failed to start' });
      expect(response.body.report).to.not.have.property('checks');
      expect(response.body.report).to.not.have.property('accessibility');
    });

    it('report with checks answers their verdict as report.checks, each failure with the check, the value and the bound', async () => {
      const response = await api.post({ url: pages.url('/missing-text'), removeAds: false, report: { checks: HEALTH_CHECKS } });
      expectOk(response);
      expect(response.body.report.checks.failing).to.equal(true);
      expect(response.body.report.checks.failures).to.deep.equal([
        { check: 'text[0].contains', measured: 'absent', bound: 'Add to cart', message: '#buy does not contain "Add to cart"' },
      ]);
      expect(response.body.report.accessibility).to.have.property('violations');
      expect(response.body.report.text.selectors['#buy']).to.deep.equal({ text: 'Sold out', truncated: false });
    });

    it('without report the answer has exactly the fields it had before', async () => {
      const response = await api.post({ url: pages.url('/healthy'), removeAds: false });
      expectOk(response);
      expect(Object.keys(response.body).sort()).to.deep.equal(hosted ? [...ANSWER_FIELDS, 'site_id'].sort() : ANSWER_FIELDS);
    });

    it('a report is answered in JSON: with an Accept that allows only the image it is a 406', async () => {
      const response = await api.post({ url: pages.url('/healthy'), report: true }, 'image/png');
      expect(response.status).to.equal(406);
      expect(response.body.error).to.match(/a report is answered in JSON/);
    });

    it('an invalid report or check is a 400 that names it', async () => {
      const response = await api.post({ url: pages.url('/healthy'), report: { checks: { maxErrors: 0 } } });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/Unknown field: "maxErrors"/);
      const wrong = await api.post({ url: pages.url('/healthy'), report: 'yes' });
      expect(wrong.status).to.equal(400);
      expect(wrong.body.error).to.match(/report must be true or false, or an object/);
    });
  });

  describe('the result cache', () => {
    let dataDir: string;
    let cache: ResultCache;
    before(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-report-cache-'));
      cache = await openDiskCache({ dir: dataDir, maxBytes: 50 * 1024 * 1024 });
    });
    after(async () => {
      await cache.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('never answers a report request from an entry without one, nor stores it', async () => {
      const app = createApp({ config: testConfig(), renderer, logger: silentLogger, resultCache: cache });
      const post = (body: Record<string, unknown>) => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);
      const url = pages.url('/healthy?cached');
      const stored = await post({ url, cacheTtl: 600 });
      expectOk(stored);
      expect(stored.body.cached).to.equal(false);
      const withReport = await post({ url, cacheTtl: 600, report: true });
      expectOk(withReport);
      expect(withReport.body.report.document.status).to.equal(200);
      expect(withReport.body).to.not.have.property('cached');
      const again = await post({ url, cacheTtl: 600 });
      expect(again.body.cached).to.equal(true);
      expect(again.body).to.not.have.property('report');
    });
  });

  describe('a remote renderer (RENDERER_URL)', () => {
    let service: RendererService;
    let remote: RemoteRenderer;
    before(async () => {
      service = await startRendererService(renderer);
    });
    after(async () => {
      await remote?.close();
      await service.close();
    });

    it('carries the report across the wire unchanged, and a capture without one as before', async () => {
      const config = testConfig({ RENDERER_URL: service.url });
      remote = await createRemoteRenderer(config.remoteRenderer!, silentLogger);
      const app = createApp({ config, renderer: remote, logger: silentLogger });
      const post = (body: Record<string, unknown>) => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);
      const response = await post({ url: pages.url('/missing-stylesheet'), removeAds: false, report: { axe: true, checks: { maxFailedRequests: 0 } } });
      expectOk(response);
      expect(response.body.report.failedRequests.items).to.deep.equal([{ url: pages.url('/missing.css'), type: 'stylesheet', reason: 'http', status: 404 }]);
      expect(response.body.report.checks.failures.map((failure: { check: string }) => failure.check)).to.deep.equal(['maxFailedRequests']);
      expect(response.body.report.accessibility).to.have.property('violations');
      const plain = await post({ url: pages.url('/healthy'), removeAds: false });
      expectOk(plain);
      expect(Object.keys(plain.body).sort()).to.deep.equal(ANSWER_FIELDS);
    });

    it('the wire form: the image, then the report\'s JSON, its length in X-Report-Bytes', () => {
      const image = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
      const result: CaptureResult = { image, format: 'png', width: 3, height: 2, fileSize: image.length, truncated: false, waitMs: 5 };
      const report = { document: { url: 'https://a.example/', status: 200, redirects: [] } } as unknown as NonNullable<CaptureResult['report']>;
      for (const sent of [result, { ...result, report }]) {
        const { headers, body } = resultAnswer(sent);
        const received = resultFromResponse(body, { ...headers, 'content-type': 'image/png' });
        expect(received).to.deep.equal(sent);
        expect('x-report-bytes' in headers).to.equal(sent.report !== undefined);
      }
      const { headers, body } = resultAnswer({ ...result, report });
      expect(() => resultFromResponse(body.subarray(0, 4), { ...headers, 'content-type': 'image/png' })).to.throw(/malformed/);
    });
  });

  describe('answers that cannot carry a report refuse it', () => {
    let hosted: HostedHarness;
    let siteId: string;
    let key: { id: string; signingSecret: string };
    before(async () => {
      hosted = await startHosted({ renderer, captures: true });
      siteId = (await hosted.api(hosted.fullKey).post('/api/sites', { name: 'shop', allowedDomains: ['127.0.0.1'] }).expect(201)).body.id;
      key = (await hosted.api(hosted.fullKey).post('/api/keys', { name: 'links', siteId }).expect(201)).body;
    });
    after(() => hosted.close());

    it('a render link with report is a 400 that says a link answers the image alone', async () => {
      const link = signRenderLink({ origin: 'http://viewfinder.test', options: [['url', pages.url('/healthy')], ['report', 'true']], keyId: key.id, signingSecret: key.signingSecret });
      const response = await hosted.api().get(link.slice('http://viewfinder.test'.length));
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal(
        'report cannot be asked of a render link, which answers the image itself: the report is answered in JSON beside the image, by POST /screenshot or POST /api/screenshot',
      );
    });

    it('an asynchronous capture with report is a 400 that says where a report is answered', async () => {
      const response = await hosted.api(hosted.fullKey).post('/api/captures').set('Content-Type', 'application/json').send({ url: pages.url('/healthy'), site_id: siteId, report: true });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.match(/^report cannot be asked of an asynchronous capture/);
    });
  });
});
