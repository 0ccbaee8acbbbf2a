import { expect } from 'chai';
import { PNG } from 'pngjs';
import type { CaptureRequest, Renderer } from '../../../services/renderer/src/renderer.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { startRenderer, testConfig } from '../../support/harness.ts';
import { pixelSimilarity } from '../../support/pixels.ts';

/**
 * The smart wait (no `wait` given) must capture each page complete: pixel for pixel what a
 * capture after a long fixed wait shows.
 */
describe('smart wait (real Chromium)', () => {
  let fixtures: FixtureServer;
  let renderer: Renderer;

  before(async () => {
    fixtures = await startFixtureServer();
    renderer = await startRenderer(testConfig({ RENDER_CONCURRENCY: '2' }));
  });
  after(() => fixtures.close());

  const request = (path: string, extra: Partial<CaptureRequest> = {}): CaptureRequest => ({
    url: fixtures.url(path),
    quality: 'standard',
    fullPage: false,
    removeAds: false,
    ...extra,
  });

  const cases: [string, string][] = [
    ['a page with a slow web font', '/slow-font?delay=800'],
    ['a page that paints its content 700 ms after load', '/late-paint?after=700'],
    ['a page whose data arrives at 2.2 s', '/data?delay=2200'],
    ['a single-page app that renders in steps', '/spa'],
    ['an image-heavy page', '/images'],
    ['a page that fades in with a CSS animation', '/fade-in'],
    ['a page whose iframe paints late', '/iframe'],
    ['a page that redirects itself from script', '/client-redirect'],
  ];
  for (const [name, path] of cases) {
    it(`captures ${name} complete`, async () => {
      const [smart, truth] = await Promise.all([renderer.capture(request(path)), renderer.capture(request(path, { wait: 4000 }))]);
      expect(pixelSimilarity(PNG.sync.read(smart.image), PNG.sync.read(truth.image))).to.equal(1);
      expect(smart.waitMs).to.be.a('number').and.satisfy(Number.isInteger);
    });
  }

  it('waits for the load event before a fixed `wait`, then waits exactly that long on top', async () => {
    // The content paints 700 ms after load; the load event itself waits for a 1.5 s image.
    const page = `/echo?html=${encodeURIComponent(
      '<body style="margin:0;height:100vh"><img src="/asset/solid.png?delay=1500&w=10&h=10"><script>addEventListener("load",()=>setTimeout(()=>document.body.style.background="#00ff00",700))</script>',
    )}`;
    const result = await renderer.capture(request(page, { wait: 1000 }));
    const image = PNG.sync.read(result.image);
    const offset = (image.width * 360 + 640) * 4;
    expect([image.data[offset], image.data[offset + 1], image.data[offset + 2]]).to.deep.equal([0, 255, 0]);
  });
});
