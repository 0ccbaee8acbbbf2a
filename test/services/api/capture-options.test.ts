import { expect } from 'chai';
import type request from 'supertest';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { captureVariants, type CaptureVariant } from '../../support/capture-variants.ts';
import { closeImageDecoder, decodeAnyDataUri, decodeImage, near } from '../../support/decode-image.ts';
import { page, startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { decodeDataUri, startRenderer, testConfig } from '../../support/harness.ts';

type Rgb = [number, number, number];
const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];

/** A short navigation timeout, so that a selector that never appears costs seconds, not the default 30. */
const ENV = { NAVIGATION_TIMEOUT_MS: '6000' };

const variants = captureVariants(ENV);

describe('capture options beyond the spec (real Chromium, both variants)', () => {
  let fixtures: FixtureServer;
  let renderer: Renderer;

  before(async () => {
    fixtures = await startFixtureServer();
    renderer = await startRenderer(testConfig(ENV));
  });
  after(async () => {
    await closeImageDecoder();
    await fixtures.close();
  });

  /** A page served by the fixture server from this HTML body and style. */
  const echo = (body: string, style = '') => fixtures.url(`/echo?html=${encodeURIComponent(page(body, { style }))}`);

  for (const variant of variants) {
    describe(variant.name, () => {
      let api: Awaited<ReturnType<CaptureVariant['start']>>;
      before(async () => {
        api = await variant.start(renderer);
      });
      after(() => api.close());

      const ok = (response: request.Response) => expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);

      describe('format and imageQuality', () => {
        for (const format of ['jpeg', 'webp'] as const) {
          it(`format ${format}: a ${format} data URI whose decoded pixels, width, height and fileSize match the page`, async () => {
            const response = await api.post({ url: fixtures.url('/geometry'), format, imageQuality: 90 });
            ok(response);
            const image = await decodeAnyDataUri(response.body.image);
            expect(image.mimeType).to.equal(`image/${format}`);
            expect([image.png.width, image.png.height]).to.deep.equal([1280, 720]);
            expect(response.body).to.include({ width: 1280, height: 720, fileSize: image.bytes.length });
            expect(near(image.rgb(10, 10), RED)).to.equal(true, `top-left ${image.rgb(10, 10).join(',')}`);
            expect(near(image.rgb(640, 360), GREEN)).to.equal(true, `middle ${image.rgb(640, 360).join(',')}`);
            expect(near(image.rgb(1270, 710), BLUE)).to.equal(true, `bottom-right ${image.rgb(1270, 710).join(',')}`);
          });
        }

        it('imageQuality trades bytes for fidelity: quality 5 is smaller than 95 and further from the page', async () => {
          const url = echo('', 'body{height:100vh;background:linear-gradient(90deg,#ff0000,#0000ff)}');
          const [low, high] = await Promise.all([api.post({ url, format: 'jpeg', imageQuality: 5 }), api.post({ url, format: 'jpeg', imageQuality: 95 })]);
          ok(low);
          ok(high);
          expect(low.body.fileSize).to.be.below(high.body.fileSize);
          const [lowImage, highImage] = await Promise.all([decodeAnyDataUri(low.body.image), decodeAnyDataUri(high.body.image)]);
          // At the very left the gradient is pure red; the coarse encoding strays further from it.
          const error = (rgb: Rgb) => rgb.reduce((sum, value, i) => sum + Math.abs(value - (RED[i] as number)), 0);
          expect(error(highImage.rgb(2, 360))).to.be.at.most(error(lowImage.rgb(2, 360)));
        });

        it('png stays the default and the answer has no field it did not have before', async () => {
          const response = await api.post({ url: fixtures.url('/simple') });
          ok(response);
          expect(response.type).to.equal('application/json');
          expect(response.body.image).to.match(/^data:image\/png;base64,/);
          expect(response.body).to.not.have.any.keys('cached', 'format', 'truncated');
          expect(response.headers).to.not.have.property('viewfinder-cache');
        });

        it('rejects imageQuality with png (given or by default) and out of 1..100, with the usual 400 shape', async () => {
          for (const body of [{ imageQuality: 50 }, { format: 'png', imageQuality: 50 }]) {
            const response = await api.post({ url: fixtures.url('/simple'), ...body });
            expect(response.status).to.equal(400);
            expect(response.body).to.deep.equal({ success: false, error: 'imageQuality applies to jpeg and webp only: set format to one of them' });
          }
          const outOfRange = await api.post({ url: fixtures.url('/simple'), format: 'jpeg', imageQuality: 101 });
          expect(outOfRange.body).to.deep.equal({ success: false, error: 'imageQuality must be an integer from 1 to 100' });
          const badFormat = await api.post({ url: fixtures.url('/simple'), format: 'gif' });
          expect(badFormat.body).to.deep.equal({ success: false, error: 'format must be one of png, jpeg, webp, pdf' });
        });
      });

      describe('raw image answers (Accept)', () => {
        it('Accept: image/png answers the PNG bytes, with the metadata in Viewfinder-* headers', async () => {
          const response = await api.post({ url: fixtures.url('/geometry') }, 'image/png');
          ok(response);
          expect(response.type).to.equal('image/png');
          const image = decodeDataUri(`data:image/png;base64,${(response.body as Buffer).toString('base64')}`);
          expect(image.rgb(5, 5)).to.deep.equal(RED);
          expect(response.headers).to.include({ 'viewfinder-width': '1280', 'viewfinder-height': '720', 'viewfinder-quality': 'standard' });
          expect(Number(response.headers['viewfinder-file-size'])).to.equal((response.body as Buffer).length);
          expect(Number(response.headers['viewfinder-processing-time-ms'])).to.be.a('number').and.satisfy(Number.isInteger);
          expect(response.headers['viewfinder-url']).to.equal(fixtures.url('/geometry'));
        });

        it('Accept: image/webp without format renders webp; image/* means png; a format that Accept allows wins', async () => {
          const webp = await api.post({ url: fixtures.url('/geometry') }, 'image/webp');
          ok(webp);
          expect(webp.type).to.equal('image/webp');
          const decoded = await decodeImage(webp.body as Buffer, 'image/webp');
          expect([decoded.png.width, decoded.png.height]).to.deep.equal([1280, 720]);
          expect(near(decoded.rgb(640, 360), GREEN)).to.equal(true);

          expect((await api.post({ url: fixtures.url('/simple') }, 'image/*')).type).to.equal('image/png');
          const jpeg = await api.post({ url: fixtures.url('/simple'), format: 'jpeg' }, 'image/*');
          expect(jpeg.type).to.equal('image/jpeg');
          expect((jpeg.body as Buffer).subarray(0, 2)).to.deep.equal(Buffer.from([0xff, 0xd8]));
        });

        it('an Accept that excludes the requested format is a JSON 406; errors stay JSON with an image Accept', async () => {
          const notAcceptable = await api.post({ url: fixtures.url('/simple'), format: 'png' }, 'image/jpeg');
          expect(notAcceptable.status).to.equal(406);
          expect(notAcceptable.type).to.equal('application/json');
          expect(notAcceptable.body.success).to.equal(false);
          expect(notAcceptable.body.error).to.match(/Accept/);

          const missingUrl = await api.post({}, 'image/png');
          expect(missingUrl.status).to.equal(400);
          expect(missingUrl.type).to.equal('application/json');
          expect(missingUrl.body).to.deep.equal({ success: false, error: 'URL is required' });
        });
      });

      describe('selector', () => {
        const boxPage = () =>
          echo(
            '<div id="box"></div><div id="empty"></div><div id="far"></div>',
            `body{background:#ff0000;height:3000px}
             #box{position:absolute;left:100px;top:150px;width:200px;height:100px;background:#0000ff}
             #empty{width:0;height:0}
             #far{position:absolute;left:0;top:2000px;width:300px;height:50px;background:#00ff00}`,
          );

        it('captures only the first matching element, at the profile scale, even below the fold', async () => {
          const response = await api.post({ url: boxPage(), selector: '#box' });
          ok(response);
          expect(response.body).to.include({ width: 200, height: 100, truncated: false });
          const image = decodeDataUri(response.body.image);
          for (const [x, y] of [[0, 0], [199, 99], [100, 50]] as const) expect(image.rgb(x, y)).to.deep.equal(BLUE);

          const retina = await api.post({ url: boxPage(), selector: 'div', quality: 'retina' });
          ok(retina);
          expect(retina.body).to.include({ width: 400, height: 200 });

          const far = await api.post({ url: boxPage(), selector: '#far' });
          ok(far);
          expect(far.body).to.include({ width: 300, height: 50 });
          expect(decodeDataUri(far.body.image).rgb(150, 25)).to.deep.equal(GREEN);
        });

        it('a missing element, an element without size, and fullPage with selector are 400s naming the selector', async () => {
          const missing = await api.post({ url: boxPage(), selector: '#nope' });
          expect(missing.status).to.equal(400);
          expect(missing.body).to.deep.equal({ success: false, error: 'No element matches selector "#nope"' });

          const empty = await api.post({ url: boxPage(), selector: '#empty' });
          expect(empty.status).to.equal(400);
          expect(empty.body.error).to.match(/^The element matching selector "#empty" has no size/);

          const both = await api.post({ url: boxPage(), selector: '#box', fullPage: true });
          expect(both.status).to.equal(400);
          expect(both.body.error).to.equal('fullPage and selector cannot be combined: selector captures one element, fullPage the whole page');
        });

        it('an invalid CSS selector in any selector field is a 400 that names the field and the selector', async () => {
          const response = await api.post({ url: boxPage(), selector: 'div[', waitForSelector: '#ok', hideSelectors: ['.fine', '>>>'] });
          expect(response.status).to.equal(400);
          expect(response.body).to.deep.equal({
            success: false,
            error: 'selector is not a valid CSS selector: "div["; hideSelectors[1] is not a valid CSS selector: ">>>"',
          });
          // puppeteer's own selector syntax is not CSS, so it is refused too.
          const extension = await api.post({ url: boxPage(), waitForSelector: '::-p-text(Hello)' });
          expect(extension.status).to.equal(400);
          expect(extension.body.error).to.equal('waitForSelector is not a valid CSS selector: "::-p-text(Hello)"');
        });
      });

      describe('waitForSelector', () => {
        it('waits until the element is visible: it is in the picture', async () => {
          // The element exists from the start but stays hidden until 1500 ms after load.
          const url = echo(
            '<div id="late" style="visibility:hidden"></div><script>addEventListener("load",()=>setTimeout(()=>document.getElementById("late").style.visibility="visible",1500))</script>',
            '#late{position:absolute;left:0;top:0;width:300px;height:300px;background:#00ff00}',
          );
          const response = await api.post({ url, waitForSelector: '#late', wait: 1000 });
          ok(response);
          expect(decodeDataUri(response.body.image).rgb(150, 150)).to.deep.equal(GREEN);
        });

        it('an element that never becomes visible is a 408 that says so', async () => {
          const response = await api.post({ url: fixtures.url('/simple'), waitForSelector: '#never' });
          expect(response.status).to.equal(408);
          expect(response.body).to.deep.equal({
            success: false,
            error: 'Navigation timeout: no element matching waitForSelector "#never" became visible within the navigation timeout',
          });
        });
      });

      describe('hideSelectors', () => {
        it('hides every matching element before the screenshot', async () => {
          const url = echo(
            '<div class="ad" id="a1"></div><div class="ad" id="a2"></div><div id="banner"></div>',
            `body{background:#00ff00;height:100vh}
             .ad,#banner{position:absolute;width:100px;height:100px;background:#ff0000}
             #a1{left:0;top:0} #a2{left:200px;top:0} #banner{left:400px;top:0}`,
          );
          const shown = decodeDataUri((await api.post({ url })).body.image);
          expect(shown.rgb(50, 50)).to.deep.equal(RED);
          const response = await api.post({ url, hideSelectors: ['.ad', '#banner'] });
          ok(response);
          const image = decodeDataUri(response.body.image);
          for (const x of [50, 250, 450]) expect(image.rgb(x, 50)).to.deep.equal(GREEN);
        });

        it('takes at most 50 selectors', async () => {
          const response = await api.post({ url: fixtures.url('/simple'), hideSelectors: Array.from({ length: 51 }, (_, i) => `.x${i}`) });
          expect(response.status).to.equal(400);
          expect(response.body.error).to.equal('hideSelectors must be a list of at most 50 non-empty CSS selectors of at most 1024 characters');
        });
      });

      describe('darkMode and reducedMotion', () => {
        const mediaPage = () =>
          echo(
            '<div id="scheme"></div><div id="motion"></div>',
            `body{height:100vh} #scheme,#motion{width:100px;height:100px;background:#ffffff}
             @media (prefers-color-scheme: dark){#scheme{background:#000000}}
             @media (prefers-reduced-motion: reduce){#motion{background:#0000ff}}`,
          );

        it('darkMode: true emulates prefers-color-scheme: dark; without it the page is light', async () => {
          const light = decodeDataUri((await api.post({ url: mediaPage() })).body.image);
          expect(light.rgb(50, 50)).to.deep.equal(WHITE);
          const response = await api.post({ url: mediaPage(), darkMode: true });
          ok(response);
          const dark = decodeDataUri(response.body.image);
          expect(dark.rgb(50, 50)).to.deep.equal(BLACK);
          expect(dark.rgb(50, 150)).to.deep.equal(WHITE); // reduced motion was not asked for
        });

        it('reducedMotion: true emulates prefers-reduced-motion: reduce', async () => {
          const response = await api.post({ url: mediaPage(), reducedMotion: true });
          ok(response);
          const image = decodeDataUri(response.body.image);
          expect(image.rgb(50, 150)).to.deep.equal(BLUE);
          expect(image.rgb(50, 50)).to.deep.equal(WHITE);
        });
      });
    });
  }
});
