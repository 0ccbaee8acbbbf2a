import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../../../services/api/src/app.ts';
import { apiRegistry } from '../../../../services/api/src/metrics.ts';
import { openDiskCache } from '../../../../services/api/src/result-cache/disk-cache.ts';
import type { ResultCache } from '../../../../services/api/src/result-cache/result-cache.ts';
import type { Renderer } from '../../../../services/renderer/src/renderer.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { decodeDataUri, sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';
import { pdfInfo, pdfOfDataUri } from '../../../support/pdf.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/** The real pool, counting the captures that reach it: a hit must not be one of them. */
function countingRenderer(renderer: Renderer): Renderer & { renders: number } {
  const counting = {
    renders: 0,
    isReady: () => renderer.isReady(),
    stats: () => renderer.stats(),
    close: () => renderer.close(),
    capture: (...args: Parameters<Renderer['capture']>) => {
      counting.renders += 1;
      return renderer.capture(...args);
    },
  };
  return counting;
}

const counter = async (name: string) => (await apiRegistry.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('result cache through the API (real Chromium, files under DATA_DIR)', () => {
  let fixtures: FixtureServer;
  let renderer: Renderer & { renders: number };
  let dataDir: string;
  let cache: ResultCache;

  before(async () => {
    fixtures = await startFixtureServer();
    renderer = countingRenderer(await sharedRenderer());
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-cached-screenshot-'));
    cache = await openDiskCache({ dir: path.join(dataDir, 'result-cache'), maxBytes: 100 * 1024 * 1024 });
  });
  after(async () => {
    await fixtures.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('self-hosted', () => {
    const app = () => createApp({ config: testConfig(), renderer, logger: silentLogger, resultCache: cache });
    const post = (body: Record<string, unknown>, accept?: string) => {
      const test = request(app().callback()).post('/screenshot').set('Content-Type', 'application/json');
      return (accept ? test.set('Accept', accept) : test).send(body);
    };

    it('answers the same request within its cacheTtl from the cache, without rendering, and says so', async () => {
      const url = fixtures.url('/geometry?case=hit');
      const [hitsBefore, missesBefore] = [await counter('viewfinder_result_cache_hits_total'), await counter('viewfinder_result_cache_misses_total')];
      const first = await post({ url, cacheTtl: 60 });
      expect(first.status).to.equal(200);
      expect(first.body.cached).to.equal(false);
      expect(first.headers['viewfinder-cache']).to.equal('miss');
      const rendersAfterMiss = renderer.renders;

      const second = await post({ url, cacheTtl: 60 });
      expect(second.status).to.equal(200);
      expect(renderer.renders).to.equal(rendersAfterMiss);
      expect(second.body.cached).to.equal(true);
      expect(second.headers['viewfinder-cache']).to.equal('hit');
      expect(second.body.image).to.equal(first.body.image);
      expect(decodeDataUri(second.body.image).rgb(5, 5)).to.deep.equal([255, 0, 0]);
      for (const field of ['url', 'quality', 'width', 'height', 'fileSize', 'waitMs']) expect(second.body[field], field).to.deep.equal(first.body[field]);
      expect(second.body.processingTimeMs).to.be.a('number');
      expect(await counter('viewfinder_result_cache_hits_total')).to.equal(hitsBefore + 1);
      expect(await counter('viewfinder_result_cache_misses_total')).to.equal(missesBefore + 1);
    });

    it('a raw image answer from the cache carries Viewfinder-Cache: hit', async () => {
      const url = fixtures.url('/simple?case=raw');
      await post({ url, cacheTtl: 60, format: 'webp' });
      const renders = renderer.renders;
      const response = await post({ url, cacheTtl: 60, format: 'webp' }, 'image/webp');
      expect(response.status).to.equal(200);
      expect(response.type).to.equal('image/webp');
      expect(response.headers['viewfinder-cache']).to.equal('hit');
      expect(renderer.renders).to.equal(renders);
    });

    it('a PDF is cached too: A4 by name or by size is one entry, landscape another; raw and JSON answers share it', async () => {
      const url = fixtures.url('/simple?case=pdf');
      const first = await post({ url, cacheTtl: 60, format: 'pdf' });
      expect(first.status).to.equal(200);
      expect(first.body.cached).to.equal(false);
      const renders = renderer.renders;
      const again = await post({ url, cacheTtl: 60, format: 'pdf', pdf: { width: '210mm', height: '297mm', printBackground: true } });
      expect(again.body).to.include({ cached: true, image: first.body.image, width: first.body.width, height: first.body.height, fileSize: first.body.fileSize });
      expect((await pdfInfo(pdfOfDataUri(again.body.image))).pages).to.equal(1);
      const raw = await post({ url, cacheTtl: 60, format: 'pdf' }, 'application/pdf');
      expect(raw.type).to.equal('application/pdf');
      expect(raw.headers['viewfinder-cache']).to.equal('hit');
      expect(renderer.renders).to.equal(renders);
      const landscape = await post({ url, cacheTtl: 60, format: 'pdf', pdf: { landscape: true } });
      expect(landscape.body.cached).to.equal(false);
      expect(renderer.renders).to.equal(renders + 1);
    });

    it('renders again for any other option, and with cacheTtl 0 neither reads, stores nor mentions the cache', async () => {
      const url = fixtures.url('/simple?case=options');
      await post({ url, cacheTtl: 60 });
      const renders = renderer.renders;
      const dark = await post({ url, cacheTtl: 60, darkMode: true });
      expect(dark.body.cached).to.equal(false);
      expect(renderer.renders).to.equal(renders + 1);

      const uncached = await post({ url, cacheTtl: 0 });
      expect(uncached.status).to.equal(200);
      expect(uncached.body).to.not.have.property('cached');
      expect(uncached.headers).to.not.have.property('viewfinder-cache');
      expect(renderer.renders).to.equal(renders + 2);
    });

    it('does not serve an entry older than the asking request allows, even one stored for longer', async () => {
      const url = fixtures.url('/simple?case=age');
      expect((await post({ url, cacheTtl: 3600 })).body.cached).to.equal(false);
      await sleep(1100);
      expect((await post({ url, cacheTtl: 1 })).body.cached).to.equal(false);
      expect((await post({ url, cacheTtl: 3600 })).body.cached).to.equal(true);
    });

    it('rejects a cacheTtl beyond 30 days or not a whole number of seconds', async () => {
      for (const cacheTtl of [2_592_001, -1, 1.5, '60']) {
        const response = await post({ url: fixtures.url('/simple'), cacheTtl });
        expect(response.status).to.equal(400);
        expect(response.body).to.deep.equal({ success: false, error: 'cacheTtl must be an integer number of seconds from 0 to 2592000 (30 days)' });
      }
    });
  });

  describe('hosted', () => {
    let hosted: HostedHarness;
    before(async () => {
      hosted = await startHosted({ renderer });
    });
    after(() => hosted.close());

    it('never shares entries between sites', async () => {
      const app = createApp({ config: testConfig({ MODE: 'hosted', DATA_DIR: hosted.dataDir }), renderer, logger: silentLogger, store: hosted.store, resultCache: cache });
      const siteIds: string[] = [];
      for (const name of ['a', 'b']) {
        const site = await request(app.callback()).post('/api/sites').set('X-API-Key', hosted.fullKey).set('Content-Type', 'application/json').send({ name, allowedDomains: [] });
        siteIds.push(site.body.id as string);
      }
      const post = (siteId: string) =>
        request(app.callback())
          .post('/api/screenshot')
          .set('X-API-Key', hosted.fullKey)
          .set('Content-Type', 'application/json')
          .send({ url: fixtures.url('/simple?case=sites'), cacheTtl: 60, site_id: siteId });
      const [a, b] = siteIds as [string, string];
      expect((await post(a)).body).to.include({ cached: false, site_id: a });
      const hit = await post(a);
      expect(hit.body).to.include({ cached: true, site_id: a });
      expect(hit.headers['viewfinder-cache']).to.equal('hit');
      expect((await post(b)).body).to.include({ cached: false, site_id: b });
    });
  });
});
