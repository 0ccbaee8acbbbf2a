import { expect } from 'chai';
import request from 'supertest';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { captureVariants, describeEachVariant, expectOk } from '../../support/capture-variants.ts';
import { page, startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, sharedRenderer, startRenderer, testConfig } from '../../support/harness.ts';
import { useGuardBed } from '../../support/guard-bed.ts';
import { cssPx, pdfInfo, pdfOfDataUri, rawBytes, renderPdfPage } from '../../support/pdf.ts';

type Rgb = [number, number, number];
const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const WHITE: Rgb = [255, 255, 255];

/** Short, so that the timeout case costs seconds. */
const ENV = { NAVIGATION_TIMEOUT_MS: '5000' };

/** pdftoppm antialiases edges and may round a colour by a unit or two; the blocks are tested well inside. */
const near = (actual: Rgb, expected: Rgb) => actual.every((value, i) => Math.abs(value - (expected[i] as number)) <= 8);

/** A4 as Chromium prints it: 210 x 297 mm, to its device units. */
const A4_PT = { width: 595.92, height: 841.92 };

describe('format pdf (real Chromium, PDFs read by poppler, both variants)', function () {
  this.timeout(120_000);
  let fixtures: FixtureServer;
  let renderer: Renderer;

  before(async () => {
    fixtures = await startFixtureServer();
    renderer = await startRenderer(testConfig(ENV));
  });
  after(() => fixtures.close());

  const echo = (body: string, style = '') => fixtures.url(`/echo?html=${encodeURIComponent(page(body, { style }))}`);
  /** A green page with a 200 x 100 CSS px red block at its top-left corner. */
  const blockPage = () => echo('<div id="block"></div>', 'body{background:#00ff00;min-height:100vh}#block{width:200px;height:100px;background:#ff0000}');

  describe('the page bound (PDF_MAX_PAGES)', () => {
    it('refuses a PDF with more pages than the bound with a 400 naming both, and prints one within it, pageRanges included', async () => {
      const bounded = await startRenderer(testConfig({ ...ENV, PDF_MAX_PAGES: '2' }));
      const [variant] = captureVariants({ ...ENV, PDF_MAX_PAGES: '2' });
      const api = await variant!.start(bounded);
      try {
        // Three A4 pages of 1123 CSS px.
        const tall = fixtures.url('/tall?height=3000');
        const refused = await api.post({ url: tall, format: 'pdf' });
        expect(refused.status).to.equal(400);
        expect(refused.body).to.deep.equal({
          success: false,
          error: 'The PDF has 3 pages, more than the 2 a PDF may have here (PDF_MAX_PAGES): select fewer with pdf.pageRanges, or print on larger paper',
        });
        const some = await api.post({ url: tall, format: 'pdf', pdf: { pageRanges: '2-3' } });
        expect(some.status).to.equal(200);
        expect(some.body.image).to.match(/^data:application\/pdf;base64,/);
      } finally {
        await api.close();
      }
    });

    it('defaults to 100 pages and checks PDF_MAX_PAGES', () => {
      expect(testConfig().renderer.pdfMaxPages).to.equal(100);
      expect(() => testConfig({ PDF_MAX_PAGES: '0' })).to.throw(/PDF_MAX_PAGES/);
    });
  });

  describeEachVariant(ENV, () => renderer, (api, variant) => {
    const ok = expectOk;
    const pdfOf = async (body: Record<string, unknown>) => {
      const response = await api.post({ url: blockPage(), format: 'pdf', ...body });
      ok(response);
      return { response, bytes: pdfOfDataUri(response.body.image) };
    };

    it('prints one A4 page whose pixels, drawn by pdftoppm, are the page: the block at its place and size, the background printed', async () => {
      const { response, bytes } = await pdfOf({});
      const info = await pdfInfo(bytes);
      expect(info).to.include({ pages: 1, paperName: 'A4' });
      expect(info.widthPt).to.be.closeTo(A4_PT.width, 1);
      expect(info.heightPt).to.be.closeTo(A4_PT.height, 1);
      // width and height: the first page in CSS px; fileSize: the PDF's bytes. No truncated field.
      expect(response.body).to.include({ width: cssPx(info.widthPt), height: cssPx(info.heightPt), fileSize: bytes.length });
      expect(response.body).to.not.have.property('truncated');

      const drawn = await renderPdfPage(bytes);
      expect(drawn.png.width).to.be.closeTo(cssPx(info.widthPt), 1);
      expect(near(drawn.rgb(20, 20), RED), `block ${drawn.rgb(20, 20)}`).to.equal(true);
      expect(near(drawn.rgb(190, 90), RED), `block's far corner ${drawn.rgb(190, 90)}`).to.equal(true);
      expect(near(drawn.rgb(210, 20), GREEN), `right of the block ${drawn.rgb(210, 20)}`).to.equal(true);
      expect(near(drawn.rgb(20, 110), GREEN), `below the block ${drawn.rgb(20, 110)}`).to.equal(true);
      expect(near(drawn.rgb(400, 700), GREEN), `background ${drawn.rgb(400, 700)}`).to.equal(true);
    });

    it('printBackground: false leaves backgrounds out, as a browser prints by default', async () => {
      const drawn = await renderPdfPage((await pdfOf({ pdf: { printBackground: false } })).bytes);
      expect(drawn.rgb(20, 20)).to.deep.equal(WHITE);
      expect(drawn.rgb(400, 700)).to.deep.equal(WHITE);
    });

    it('paper, landscape and a size of its own set the page size; width and height follow', async () => {
      const letter = await pdfOf({ pdf: { paper: 'Letter', landscape: true } });
      const letterInfo = await pdfInfo(letter.bytes);
      expect([letterInfo.widthPt, letterInfo.heightPt, letterInfo.paperName]).to.deep.equal([792, 612, 'letter']);
      expect(letter.response.body).to.include({ width: 1056, height: 816 });

      const legal = await pdfInfo((await pdfOf({ pdf: { paper: 'Legal' } })).bytes);
      expect([legal.widthPt, legal.heightPt]).to.deep.equal([612, 1008]);

      const custom = await pdfOf({ pdf: { width: '100mm', height: '6in' } });
      const customInfo = await pdfInfo(custom.bytes);
      expect(customInfo.widthPt).to.be.closeTo((100 / 25.4) * 72, 1);
      expect(customInfo.heightPt).to.be.closeTo(6 * 72, 1);
      expect(custom.response.body).to.include({ width: cssPx(customInfo.widthPt), height: cssPx(customInfo.heightPt) });
    });

    it('margins move the content in and are left blank', async () => {
      const drawn = await renderPdfPage((await pdfOf({ pdf: { margin: { top: '1in', left: '0.5in' } } })).bytes);
      expect(drawn.rgb(20, 20)).to.deep.equal(WHITE);
      expect(drawn.rgb(40, 200)).to.deep.equal(WHITE); // inside the left margin (48 px)
      expect(near(drawn.rgb(48 + 20, 96 + 20), RED), `block ${drawn.rgb(68, 116)}`).to.equal(true);
      expect(near(drawn.rgb(48 + 210, 96 + 20), GREEN), `background ${drawn.rgb(258, 116)}`).to.equal(true);
    });

    it('a tall page runs onto several pages; pageRanges keeps some of them; a range past the end is a 400', async () => {
      // 2900 px of red, then a 100 px green band: three A4 pages of 1123 CSS px.
      const tall = fixtures.url('/tall?height=3000');
      const all = await api.post({ url: tall, format: 'pdf' });
      ok(all);
      expect((await pdfInfo(pdfOfDataUri(all.body.image))).pages).to.equal(3);

      const some = await api.post({ url: tall, format: 'pdf', pdf: { pageRanges: '2-3' } });
      ok(some);
      const bytes = pdfOfDataUri(some.body.image);
      expect((await pdfInfo(bytes)).pages).to.equal(2);
      // Its first page is the document's second: red all over, no green band yet.
      const second = await renderPdfPage(bytes, 1);
      expect(near(second.rgb(400, 100), RED)).to.equal(true);
      expect(near(second.rgb(400, 1100), RED)).to.equal(true);
      const last = await renderPdfPage(bytes, 2);
      // The band is at 2900..3000 of the page, i.e. from 2900 - 2 * page height on the third page.
      const bandTop = 2900 - 2 * (cssPx(A4_PT.height) - 0);
      expect(near(last.rgb(400, bandTop + 50), GREEN), `band ${last.rgb(400, bandTop + 50)}`).to.equal(true);

      // Pages past the end are left out, as Chromium does, as long as one page remains.
      const partly = await api.post({ url: tall, format: 'pdf', pdf: { pageRanges: '2, 7-9' } });
      ok(partly);
      expect((await pdfInfo(pdfOfDataUri(partly.body.image))).pages).to.equal(1);
      const past = await api.post({ url: tall, format: 'pdf', pdf: { pageRanges: '7-9' } });
      expect(past.status).to.equal(400);
      expect(past.body).to.deep.equal({ success: false, error: 'pdf.pageRanges "7-9" selects no page of the document: it has fewer pages' });
    });

    it('content that appears only when scrolled into view is in the PDF, as in a full-page capture', async () => {
      // Red until an IntersectionObserver sees it, 2500 px down: on the third A4 page.
      const url = echo(
        `<div style="height:2500px"></div><div id="lazy" style="height:200px;background:#ff0000"></div>
        <script>new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) document.getElementById('lazy').style.background = '#00ff00'; }).observe(document.getElementById('lazy'));</script>`,
      );
      const response = await api.post({ url, format: 'pdf' });
      ok(response);
      const bytes = pdfOfDataUri(response.body.image);
      expect((await pdfInfo(bytes)).pages).to.equal(3);
      const third = await renderPdfPage(bytes, 3);
      const y = 2500 - 2 * cssPx(A4_PT.height) + 100;
      expect(near(third.rgb(300, y), GREEN), `lazy block ${third.rgb(300, y)}`).to.equal(true);
    });

    it('emulateMedia: print (the default) applies the print stylesheet, screen the screen one', async () => {
      const url = echo('', '@media print{body{background:#0000ff}}@media screen{body{background:#ff0000}}html,body{height:100%}');
      for (const [emulateMedia, colour] of [[undefined, BLUE], ['print', BLUE], ['screen', RED]] as const) {
        const response = await api.post({ url, format: 'pdf', ...(emulateMedia ? { pdf: { emulateMedia } } : {}) });
        ok(response);
        const drawn = await renderPdfPage(pdfOfDataUri(response.body.image));
        expect(near(drawn.rgb(300, 300), colour), `${emulateMedia}: ${drawn.rgb(300, 300)}`).to.equal(true);
      }
    });

    it('darkMode holds in a PDF, printed with either media', async () => {
      const url = echo('', 'html,body{height:100%}body{background:#ff0000}@media (prefers-color-scheme:dark){body{background:#00ff00}}@media screen and (prefers-color-scheme:dark){body{background:#0000ff}}');
      for (const [emulateMedia, darkMode, colour] of [['print', false, RED], ['print', true, GREEN], ['screen', true, BLUE]] as const) {
        const response = await api.post({ url, format: 'pdf', darkMode, pdf: { emulateMedia } });
        ok(response);
        const drawn = await renderPdfPage(pdfOfDataUri(response.body.image));
        expect(near(drawn.rgb(300, 300), colour), `${emulateMedia}, darkMode ${darkMode}: ${drawn.rgb(300, 300)}`).to.equal(true);
      }
    });

    it('hideSelectors and wait apply to a PDF as to an image', async () => {
      const hidden = await renderPdfPage((await pdfOf({ hideSelectors: ['#block'] })).bytes);
      expect(near(hidden.rgb(20, 20), GREEN), `${hidden.rgb(20, 20)}`).to.equal(true);
      // White until 300 ms after load, then green: `wait` waits for it.
      const late = await api.post({ url: fixtures.url('/late-paint?after=300'), format: 'pdf', wait: 1500 });
      ok(late);
      expect(late.body.waitMs).to.be.at.least(1500);
      const drawn = await renderPdfPage(pdfOfDataUri(late.body.image));
      expect(near(drawn.rgb(300, 300), GREEN), `${drawn.rgb(300, 300)}`).to.equal(true);
    });

    it('Accept: application/pdf answers the PDF bytes with the fields in headers, with format pdf or without format', async () => {
      for (const body of [{ format: 'pdf' }, {}]) {
        const response = await api.post({ url: blockPage(), ...body }, 'application/pdf').buffer(true).parse(rawBytes);
        ok(response);
        expect(response.type).to.equal('application/pdf');
        const bytes = response.body as Buffer;
        const info = await pdfInfo(bytes);
        expect(info.pages).to.equal(1);
        expect(response.headers).to.include({
          'viewfinder-width': String(cssPx(info.widthPt)),
          'viewfinder-height': String(cssPx(info.heightPt)),
          'viewfinder-file-size': String(bytes.length),
        });
      }
    });

    it('format pdf with an image Accept is a 406; fullPage with a PDF, asked either way, is a 400', async () => {
      const notAcceptable = await api.post({ url: blockPage(), format: 'pdf' }, 'image/png');
      expect(notAcceptable.status).to.equal(406);
      expect(notAcceptable.body.success).to.equal(false);
      const message = 'fullPage does not apply to format pdf: a PDF holds the whole page, on as many pages as it needs';
      for (const [body, accept] of [[{ format: 'pdf', fullPage: true }, undefined], [{ fullPage: true }, 'application/pdf']] as const) {
        const response = await api.post({ url: blockPage(), ...body }, accept);
        expect(response.status).to.equal(400);
        expect(response.body).to.deep.equal({ success: false, error: message });
      }
    });

    it('a page that does not load in time is the same 408 as for an image', async () => {
      const response = await api.post({ url: fixtures.url('/slow?delay=15000'), format: 'pdf' });
      expect(response.status).to.equal(408);
      expect(response.body).to.deep.equal({ success: false, error: 'Navigation timeout: the page took too long to load' });
    });

    if (variant.name.startsWith('hosted')) {
      it("usage counts a PDF's bytes", async () => {
        const before = await api.usage!();
        const { response } = await pdfOf({});
        const after = await api.usage!();
        expect(after.captures - before.captures).to.equal(1);
        expect(after.bytes - before.bytes).to.equal(response.body.fileSize);
      });
    }
  });
});

describe('format pdf behind the network guard (secret on 127.0.0.1, pages on allowlisted 127.0.0.2)', function () {
  this.timeout(120_000);
  const bed = useGuardBed();

  const capture = (body: Record<string, unknown>) => request(bed.app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ format: 'pdf', ...body });
  const secretUrl = (pathname = '/') => `http://127.0.0.1:${bed.secret.port}${pathname}`;

  /** What only printing loads: a print stylesheet and a print background, both on the secret. */
  const printOnly = () =>
    bed.fixtures.url(
      `/echo?html=${encodeURIComponent(
        page('<p>printed</p>', {
          head: `<link rel="stylesheet" media="print" href="${secretUrl('/print.css')}">`,
          style: `@media print{body{background:url(${secretUrl('/background.png')})}}`,
        }),
      )}`,
    );

  it('positive control: without the guard (127.0.0.0/8 allowlisted), printing that page does reach the secret', async () => {
    const open = appWith(await sharedRenderer());
    const response = await request(open.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url: printOnly(), format: 'pdf' });
    expect(response.status).to.equal(200);
    expect(bed.secret.hits()).to.be.greaterThan(0);
  });

  it('what only printing loads never reaches the secret, and the PDF is made', async () => {
    const response = await capture({ url: printOnly() });
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
    expect((await pdfInfo(pdfOfDataUri(response.body.image))).pages).to.equal(1);
    expect(bed.secret.hits(), 'requests that reached the secret').to.equal(0);
  });

  it('a blocked URL, given or redirected to, is the same 403 as for an image', async () => {
    const direct = await capture({ url: secretUrl() });
    expect(direct.status).to.equal(403);
    expect(direct.body.error).to.match(/^Forbidden: 127\.0\.0\.1 is a loopback address/);
    const redirected = await capture({ url: bed.fixtures.url(`/redirect?to=${encodeURIComponent(secretUrl())}`) });
    expect(redirected.status).to.equal(403);
    expect(redirected.body.error).to.match(/^Forbidden: 127\.0\.0\.1 is a loopback address/);
    expect(bed.secret.hits()).to.equal(0);
  });
});

