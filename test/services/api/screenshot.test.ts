import { expect } from 'chai';
import request from 'supertest';
import type Koa from 'koa';
import { PROFILES, PROFILE_NAMES } from '../../../services/renderer/src/capture/profiles.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, decodeDataUri, sharedRenderer } from '../../support/harness.ts';

const RED: [number, number, number] = [255, 0, 0];
const GREEN: [number, number, number] = [0, 255, 0];
const BLUE: [number, number, number] = [0, 0, 255];
const WHITE: [number, number, number] = [255, 255, 255];

describe('POST /screenshot (self-hosted, real Chromium)', () => {
  let fixtures: FixtureServer;
  let app: Koa;

  before(async () => {
    fixtures = await startFixtureServer();
    app = appWith(await sharedRenderer());
  });
  after(() => fixtures.close());

  const capture = (body: Record<string, unknown>) =>
    request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);

  describe('quality profiles', () => {
    const expectedPixels = { standard: [1280, 720], high: [1920, 1080], retina: [5120, 2880], mobile: [750, 1334] } as const;

    for (const quality of PROFILE_NAMES) {
      it(`${quality} yields a ${expectedPixels[quality].join('x')} PNG with the viewport's corners where the page put them`, async () => {
        const response = await capture({ url: fixtures.url('/geometry'), quality });
        expect(response.status, JSON.stringify(response.body).slice(0, 200)).to.equal(200);
        const [width, height] = expectedPixels[quality];
        const image = decodeDataUri(response.body.image);
        expect([image.png.width, image.png.height]).to.deep.equal([width, height]);
        expect(response.body).to.include({ success: true, quality, width, height });

        // 40 CSS px squares: red top-left, blue bottom-right; green between. Scale maps CSS px to image px.
        const scale = PROFILES[quality].viewport.deviceScaleFactor;
        expect(image.rgb(5, 5)).to.deep.equal(RED);
        expect(image.rgb(39 * scale, 39 * scale)).to.deep.equal(RED);
        expect(image.rgb(41 * scale, 41 * scale)).to.deep.equal(GREEN);
        expect(image.rgb(width - 5, height - 5)).to.deep.equal(BLUE);
        expect(image.rgb(width - 41 * scale, height - 41 * scale)).to.deep.equal(GREEN);
      });
    }

    it('mobile emulates a phone: a mobile user agent and touch support', async () => {
      const renderer = await sharedRenderer();
      // The page reports what it sees by painting: green when the UA says iPhone and touch exists.
      const probe = fixtures.url(
        `/echo?html=${encodeURIComponent(
          '<body style="margin:0"><script>document.body.style.background = /iPhone/.test(navigator.userAgent) && navigator.maxTouchPoints > 0 ? "#00ff00" : "#ff0000"; document.body.style.height="100vh"</script>',
        )}`,
      );
      const result = await renderer.capture({ url: probe, quality: 'mobile', fullPage: false, removeAds: false });
      const image = decodeDataUri(`data:image/png;base64,${result.image.toString('base64')}`);
      expect(image.rgb(100, 100)).to.deep.equal(GREEN);
    });
  });

  describe('the result', () => {
    it('is a data URI whose bytes decode to a PNG of the announced width and height, and fileSize is its byte length', async () => {
      const response = await capture({ url: fixtures.url('/simple') });
      expect(response.status).to.equal(200);
      const image = decodeDataUri(response.body.image);
      expect(response.body.width).to.equal(image.png.width);
      expect(response.body.height).to.equal(image.png.height);
      expect(response.body.fileSize).to.equal(image.bytes.length);
    });

    it('has every SPEC 2.2 field with its type, and the defaults applied', async () => {
      const url = fixtures.url('/simple');
      const response = await capture({ url });
      expect(response.body).to.include({ success: true, url, quality: 'standard', width: 1280, height: 720 });
      expect(response.body.processingTimeMs).to.be.a('number').and.satisfy(Number.isInteger);
      expect(response.body.fileSize).to.be.a('number').and.satisfy(Number.isInteger);
      expect(response.body).to.not.have.property('truncated');
      expect(response.type).to.equal('application/json');
    });
  });

  describe('fullPage', () => {
    it('captures the real height of a tall page, keeping the profile width', async () => {
      const response = await capture({ url: fixtures.url('/tall?height=3000'), fullPage: true });
      expect(response.status).to.equal(200);
      const image = decodeDataUri(response.body.image);
      expect([image.png.width, image.png.height]).to.deep.equal([1280, 3000]);
      expect(response.body).to.include({ width: 1280, height: 3000, truncated: false });
      expect(image.rgb(640, 10)).to.deep.equal(RED);
      expect(image.rgb(640, 2950)).to.deep.equal(GREEN);
    });

    it('keeps the scale factor: a retina full-page image is twice the CSS height', async () => {
      const response = await capture({ url: fixtures.url('/tall?height=1500'), fullPage: true, quality: 'retina' });
      expect(response.body).to.include({ width: 5120, height: 3000, truncated: false });
    });

    it('stops at the height cap on an endless page and says it was cut', async () => {
      const response = await capture({ url: fixtures.url('/endless'), fullPage: true });
      expect(response.status).to.equal(200);
      const image = decodeDataUri(response.body.image);
      expect([image.png.width, image.png.height]).to.deep.equal([1280, 5000]); // FULL_PAGE_MAX_HEIGHT in the tests
      expect(response.body).to.include({ height: 5000, truncated: true });
    });

    it('false captures the viewport only', async () => {
      const response = await capture({ url: fixtures.url('/tall?height=3000'), fullPage: false });
      expect(response.body).to.include({ width: 1280, height: 720 });
    });
  });

  describe('wait', () => {
    it('captures a page that paints late after it has painted, and reports the wait', async () => {
      const response = await capture({ url: fixtures.url('/late-paint?after=1200'), wait: 2500 });
      expect(response.status).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal(GREEN);
      expect(response.body.waitMs).to.be.at.least(2500);
    });

    it('is an extra wait: with the shortest wait the same page has not painted yet', async () => {
      // Proves the test above depends on `wait`: 1000 ms after load the page is still white.
      const response = await capture({ url: fixtures.url('/late-paint?after=4000'), wait: 1000 });
      expect(response.status).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.deep.equal(WHITE);
    });
  });

  describe('isolation', () => {
    it('gives every capture a fresh browser context: storage set by one capture is gone in the next', async () => {
      const renderer = await sharedRenderer();
      const html = encodeURIComponent(
        '<body style="margin:0;height:100vh"><script>const seen = localStorage.getItem("k") !== null || document.cookie !== ""; localStorage.setItem("k","1"); document.cookie="c=1"; document.body.style.background = seen ? "#ff0000" : "#00ff00";</script>',
      );
      // Served from the fixture origin so that storage and cookies are real (not an opaque data: origin).
      const url = fixtures.url(`/echo?html=${html}`);
      for (let i = 0; i < 4; i++) {
        const result = await renderer.capture({ url, quality: 'standard', fullPage: false, removeAds: false });
        const image = decodeDataUri(`data:image/png;base64,${result.image.toString('base64')}`);
        expect(image.rgb(100, 100), `capture ${i + 1}`).to.deep.equal(GREEN);
      }
    });
  });
});
