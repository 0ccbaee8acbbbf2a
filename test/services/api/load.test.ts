import fs from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { processTreeRss } from '../../../services/renderer/src/process-memory.ts';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { browserPidsUnder, uniqueTempRoot } from '../../support/chromium-processes.ts';
import { eventually } from '../../support/eventually.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, startRenderer, testConfig } from '../../support/harness.ts';

/** Three times more concurrent requests than the pool can hold: only 200s and 429s, and memory comes back. */
describe('POST /screenshot under load (real Chromium)', function () {
  this.timeout(180_000);
  const root = uniqueTempRoot('load');
  const ENV = { RENDER_CONCURRENCY: '2', RENDER_QUEUE_LIMIT: '2', RENDERER_TEMP_DIR: root };
  const CAPACITY = 2 + 2; // running + queued
  let fixtures: FixtureServer;
  let renderer: Renderer;
  const browserRss = () => browserPidsUnder(root).reduce((sum, pid) => sum + (processTreeRss(pid) ?? 0), 0);

  before(async () => {
    fixtures = await startFixtureServer();
    renderer = await startRenderer(testConfig(ENV));
  });
  after(async () => {
    await renderer.close();
    await fixtures.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const burst = async (size: number) => {
    const app = appWith(renderer, ENV);
    const pages = ['/slow?delay=600', '/tall?height=4000', '/geometry'];
    const responses = await Promise.all(
      Array.from({ length: size }, (_, i) =>
        request(app.callback())
          .post('/screenshot')
          .set('Content-Type', 'application/json')
          .send({ url: fixtures.url(pages[i % pages.length] as string), fullPage: i % 2 === 0, quality: i % 4 === 0 ? 'retina' : 'standard' }),
      ),
    );
    return responses.map((response) => response.status);
  };

  it('answers only 200 or 429, never 500, to 3x capacity concurrent requests, and serves as many as it can hold', async () => {
    const statuses = await burst(3 * CAPACITY);
    expect(statuses.filter((status) => status !== 200 && status !== 429), statuses.join(',')).to.deep.equal([]);
    expect(statuses.filter((status) => status === 200).length, statuses.join(',')).to.be.at.least(CAPACITY);
    expect(statuses, statuses.join(',')).to.include(429);
  });

  it('comes back to its memory baseline after repeated bursts', async () => {
    // Baseline after a warm-up, so that the first-use caches of Chromium are part of it.
    await burst(CAPACITY);
    await eventually('the pool is idle', () => renderer.stats().inFlight === 0 && renderer.stats().queued === 0);
    const baseline = browserRss();
    expect(baseline).to.be.greaterThan(0);
    for (let round = 0; round < 5; round += 1) {
      const statuses = await burst(3 * CAPACITY);
      expect(statuses.every((status) => status === 200 || status === 429), statuses.join(',')).to.equal(true);
    }
    await eventually('the pool is idle', () => renderer.stats().inFlight === 0 && renderer.stats().queued === 0);
    // Generous: used contexts close in the background and Chromium returns memory lazily. A leak of
    // one retina context per capture (about 100 MiB each) would blow far past this.
    const bound = baseline * 1.5 + 150 * 1024 * 1024;
    await eventually(`browser memory (${Math.round(browserRss() / 2 ** 20)} MiB) is back under ${Math.round(bound / 2 ** 20)} MiB`, () => browserRss() < bound, 30_000);
  });
});
