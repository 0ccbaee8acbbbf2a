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

  /** The RGB of the pixel at (x, y) of a capture. */
  const pixelAt = (png: Buffer, x: number, y: number) => {
    const image = PNG.sync.read(png);
    const offset = (image.width * y + x) * 4;
    return [image.data[offset], image.data[offset + 1], image.data[offset + 2]];
  };
  /** A script that runs `last` after `frames` animation frames from the load event, changing the page on each: no timer the probe counts. */
  const afterFrames = (frames: number, each: string, last: string) =>
    `<script>addEventListener("load",()=>{let n=0;const step=()=>{if(++n<${frames}){${each};requestAnimationFrame(step)}else{${last}}};requestAnimationFrame(step)})</script>`;

  it('does not keep a picture taken early when the page changed while it was taken (animation frames, which no timer check sees)', async () => {
    const page = `/echo?html=${encodeURIComponent(
      `<body style="margin:0;height:100vh;background:#ff0000">${afterFrames(12, 'document.body.style.background="rgb("+(20*n)+",0,0)"', 'document.body.style.background="#00ff00"')}`,
    )}`;
    for (let i = 0; i < 3; i++) expect(pixelAt((await renderer.capture(request(page))).image, 640, 360), `capture ${i}`).to.deep.equal([0, 255, 0]);
  });

  it('with removeAds, answers a notice that appears a few frames after load, after the first cleaning found nothing', async () => {
    const banner =
      'const b=document.createElement("div");b.id="notice";b.style.cssText="position:fixed;left:0;right:0;bottom:0;height:120px;background:#0000ff;color:#fff";' +
      'b.innerHTML="<p>We use cookies to improve your experience.</p><button>Reject all</button><button>Accept all</button>";' +
      'b.querySelector("button").onclick=()=>b.remove();document.body.append(b)';
    const page = `/echo?html=${encodeURIComponent(`<body style="margin:0;height:100vh;background:#00ff00"><p>Article text.</p>${afterFrames(6, 'document.body.dataset.step=n', banner)}`)}`;
    for (let i = 0; i < 3; i++) expect(pixelAt((await renderer.capture(request(page, { removeAds: true }))).image, 640, 700), `capture ${i}`).to.deep.equal([0, 255, 0]);
  });

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
