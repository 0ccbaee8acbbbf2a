import { expect } from 'chai';
import request from 'supertest';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, startRenderer, testConfig } from '../../support/harness.ts';
import { eventually } from '../../support/eventually.ts';
import type { CaptureRequest, Renderer } from '../../../services/renderer/src/renderer.ts';

/** Capacity with real Chromium: concurrency, a bounded queue, a deadline that counts queue time, cancellation. */
describe('renderer capacity (real Chromium)', function () {
  this.timeout(60_000);
  let fixtures: FixtureServer;
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());

  const job = (path: string): CaptureRequest => ({ url: fixtures.url(path), quality: 'standard', fullPage: false, removeAds: false });
  const statusOf = (promise: Promise<unknown>) => promise.then(() => 200, (err: { status?: number }) => err.status ?? 0);

  describe('a full queue', () => {
    const ENV = { RENDER_CONCURRENCY: '1', RENDER_QUEUE_LIMIT: '1' };
    let renderer: Renderer;
    before(async () => {
      renderer = await startRenderer(testConfig(ENV));
    });

    it('answers 429 with Retry-After through the API, while the running and queued captures succeed', async () => {
      const app = appWith(renderer, ENV);
      const post = (path: string) => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url: fixtures.url(path) });
      const running = post('/slow?delay=1500').then((response) => response);
      await eventually('the first capture runs', () => renderer.stats().inFlight === 1);
      const queued = post('/simple').then((response) => response);
      await eventually('the second capture is queued', () => renderer.stats().queued === 1);
      const refused = await post('/simple');
      expect(refused.status).to.equal(429);
      expect(refused.body).to.deep.equal({ success: false, error: 'Too many requests: the render queue is full, retry later' });
      expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
      expect((await running).status).to.equal(200);
      expect((await queued).status).to.equal(200);
    });

    it('reports capacity, running and queued captures in stats()', async () => {
      expect(renderer.stats()).to.include({ capacity: 1, inFlight: 0, queued: 0 });
      const first = renderer.capture(job('/slow?delay=1000'));
      const second = renderer.capture(job('/simple'));
      await eventually('one runs and one waits', () => renderer.stats().inFlight === 1 && renderer.stats().queued === 1);
      await Promise.all([first, second]);
      expect(renderer.stats()).to.include({ inFlight: 0, queued: 0 });
    });
  });

  describe('the deadline', () => {
    const ENV = { RENDER_CONCURRENCY: '1', RENDER_QUEUE_LIMIT: '4', CAPTURE_TIMEOUT_MS: '3000', NAVIGATION_TIMEOUT_MS: '20000' };
    let renderer: Renderer;
    before(async () => {
      renderer = await startRenderer(testConfig(ENV));
    });

    it('ends a capture that runs past CAPTURE_TIMEOUT_MS with 408, even while navigation has time left', async () => {
      const err = await renderer.capture(job('/slow?delay=10000')).catch((error: unknown) => error);
      expect(err).to.include({ status: 408 });
      expect((err as Error).message).to.match(/^Navigation timeout: the capture did not finish within 3000 ms, time queued included$/);
    });

    it('counts time spent queued: a quick page queued behind a slow one times out with it', async () => {
      const slow = statusOf(renderer.capture(job('/slow?delay=10000')));
      await eventually('the slow capture runs', () => renderer.stats().inFlight === 1);
      // /simple alone renders in well under 3 s; it can only miss its deadline by waiting for the slot.
      const quick = statusOf(renderer.capture(job('/simple')));
      expect(await slow).to.equal(408);
      expect(await quick).to.equal(408);
    });

    it('frees the slot after a deadline, so the next capture succeeds', async () => {
      await eventually('the slot is free', () => renderer.stats().inFlight === 0);
      expect((await renderer.capture(job('/simple'))).width).to.equal(1280);
    });
  });

  describe('cancellation when the client goes away', () => {
    const ENV = { RENDER_CONCURRENCY: '1', RENDER_QUEUE_LIMIT: '4', NAVIGATION_TIMEOUT_MS: '30000' };
    let renderer: Renderer;
    before(async () => {
      renderer = await startRenderer(testConfig(ENV));
    });

    it('drops a queued capture from the queue at once', async () => {
      const running = renderer.capture(job('/slow?delay=1500'));
      await eventually('the first capture runs', () => renderer.stats().inFlight === 1);
      const client = new AbortController();
      const queued = renderer.capture(job('/simple'), { signal: client.signal });
      await eventually('the second is queued', () => renderer.stats().queued === 1);
      const reason = new Error('client closed the request');
      client.abort(reason);
      expect(await queued.catch((err: unknown) => err)).to.equal(reason);
      expect(renderer.stats().queued).to.equal(0);
      await running;
    });

    it('stops a running capture: the page is closed and the slot frees long before the page would have loaded', async () => {
      const client = new AbortController();
      const running = renderer.capture(job('/slow?delay=25000'), { signal: client.signal });
      await eventually('the capture runs', () => renderer.stats().inFlight === 1);
      const reason = new Error('client closed the request');
      client.abort(reason);
      expect(await running.catch((err: unknown) => err)).to.equal(reason);
      await eventually('the slot is free', () => renderer.stats().inFlight === 0, 10_000);
      expect((await renderer.capture(job('/simple'))).width).to.equal(1280);
    });
  });
});
