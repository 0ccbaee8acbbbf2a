import { expect } from 'chai';
import { validateScreenshotBody } from '../../../services/api/src/routes/screenshot.ts';
import { MAX_HEADER_VALUE_LENGTH, MAX_HEADERS, MAX_HTML_BYTES } from '../../../services/renderer/src/capture/visit-options.ts';

const url = 'https://example.com/';
const errorOf = (body: unknown) => {
  try {
    validateScreenshotBody(body);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
};

describe('capture options: the 400 texts of the request schema', () => {
  it('a body that is no object gets the one message it always got, not the rules between option fields', () => {
    for (const body of ['text', 5, null, [], true]) expect(errorOf(body), JSON.stringify(body)).to.equal('Request body must be a JSON object');
  });

  it('names every problem at once, each in its own words', () => {
    expect(errorOf({ url, format: 'gif', darkMode: 'yes', hideSelectors: [''], cacheTtl: 1e9 })).to.equal(
      [
        'format must be one of png, jpeg, webp, pdf',
        'hideSelectors must be a list of at most 50 non-empty CSS selectors of at most 1024 characters',
        'darkMode must be a boolean',
        'cacheTtl must be an integer number of seconds from 0 to 2592000 (30 days)',
      ].join('; '),
    );
  });

  it('accepts every option together, and the spec-only body as before', () => {
    expect(errorOf({ url })).to.equal(undefined);
    const all = { url, format: 'jpeg', imageQuality: 70, selector: 'main', waitForSelector: 'main', hideSelectors: ['.ad'], darkMode: true, reducedMotion: true, cacheTtl: 2_592_000 };
    expect(errorOf(all)).to.equal(undefined);
    expect(errorOf({ ...all, fullPage: false })).to.equal(undefined);
  });

  it('still rejects fields nobody defined', () => {
    expect(errorOf({ url, colorScheme: 'dark' })).to.equal('Unknown field: "colorScheme"');
  });

  // The checks a schema cannot make (a time zone that exists, html's size in bytes, header names the
  // browser owns) are heard beside the schema's own mistakes, not a request later (issue 44).
  describe('the checks beyond the schema, beside its mistakes', () => {
    it("names the check's mistakes beside the schema's, in one 400", () => {
      expect(errorOf({ url, darkMode: 'yes', timezone: 'Mars/Olympus', headers: { Cookie: 'a=b' } })).to.equal(
        ['darkMode must be a boolean', 'headers cannot set "Cookie": use cookies', 'timezone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Paris)'].join('; '),
      );
      // Two-byte characters: short enough in characters for the schema, too long in bytes for the check.
      expect(errorOf({ html: 'é'.repeat(MAX_HTML_BYTES / 2 + 1), darkMode: 'yes' })).to.equal(`darkMode must be a boolean; html must be at most ${MAX_HTML_BYTES} bytes of UTF-8`);
      expect(errorOf({ timezone: 'Mars/Olympus' })).to.equal('URL is required; timezone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Paris)');
    });

    it('leaves a field the schema refused to the schema: one message for it, and the check never sees its wrong type', () => {
      expect(errorOf({ url, timezone: 5, headers: 'Host: x' })).to.equal(
        `headers must be an object of at most ${MAX_HEADERS} header names (HTTP tokens) to strings of at most ${MAX_HEADER_VALUE_LENGTH} characters without line breaks; timezone must be an IANA time zone, e.g. Europe/Paris`,
      );
    });
  });

  describe('format pdf and its options', () => {
    const pdf = (options: Record<string, unknown>, extra: Record<string, unknown> = {}) => errorOf({ url, format: 'pdf', pdf: options, ...extra });

    it('accepts every pdf option, a named paper or a size, and format pdf alone', () => {
      expect(errorOf({ url, format: 'pdf' })).to.equal(undefined);
      const margin = { top: '10mm', right: '0.5in', bottom: '1cm', left: '20px' };
      expect(pdf({ paper: 'Legal', landscape: true, margin, printBackground: false, pageRanges: ' 1-3, 5 ,8- ', emulateMedia: 'screen' })).to.equal(undefined);
      expect(pdf({ width: '100mm', height: '6in' })).to.equal(undefined);
      // Every option beyond the spec that still means something for a PDF.
      expect(errorOf({ url, format: 'pdf', waitForSelector: 'main', hideSelectors: ['.ad'], darkMode: true, reducedMotion: true, cacheTtl: 60, fullPage: false })).to.equal(undefined);
    });

    it('refuses pdf options without format pdf, and what does not apply to a PDF', () => {
      expect(errorOf({ url, pdf: { landscape: true } })).to.equal('pdf options apply to format pdf only: set format to "pdf"');
      expect(errorOf({ url, format: 'png', pdf: {} })).to.equal('pdf options apply to format pdf only: set format to "pdf"');
      expect(errorOf({ url, format: 'pdf', fullPage: true })).to.equal('fullPage does not apply to format pdf: a PDF holds the whole page, on as many pages as it needs');
      expect(errorOf({ url, format: 'pdf', selector: 'main' })).to.equal(
        'selector does not apply to format pdf: a PDF prints the whole page (hideSelectors can leave parts out)',
      );
      expect(errorOf({ url, format: 'pdf', imageQuality: 80 })).to.equal('imageQuality applies to jpeg and webp only: set format to one of them');
    });

    it('names unknown pdf fields with their path', () => {
      expect(pdf({ scale: 2 })).to.equal('Unknown field: "pdf.scale"');
      expect(pdf({ margin: { inside: '1mm' } })).to.equal('Unknown field: "pdf.margin.inside"');
      expect(errorOf({ url, format: 'pdf', pdf: 'A4' })).to.equal('pdf must be an object of PDF options');
    });

    it('refuses papers, lengths and media it does not know, each in its own words', () => {
      expect(pdf({ paper: 'A3', landscape: 'yes', emulateMedia: 'tv', margin: { top: '1' } })).to.equal(
        [
          'pdf.paper must be one of A4, Letter, Legal',
          'pdf.landscape must be a boolean',
          'pdf.margin.top must be a length with a unit: px, in, cm or mm (e.g. "210mm")',
          'pdf.emulateMedia must be one of print, screen',
        ].join('; '),
      );
      for (const width of ['10', '10pt', '-5mm', '1e3px', ' 10mm']) {
        expect(pdf({ width, height: '100mm' }), width).to.equal('pdf.width must be a length with a unit: px, in, cm or mm (e.g. "210mm")');
      }
      expect(pdf({ width: '100mm' })).to.equal('pdf.width and pdf.height go together: give both, or neither');
      expect(pdf({ paper: 'A4', width: '100mm', height: '100mm' })).to.equal(
        'pdf.paper cannot be combined with pdf.width and pdf.height: name a paper or give its size',
      );
    });

    it('refuses bad page ranges: syntax, page 0, and a range that runs backwards', () => {
      const syntax = 'pdf.pageRanges must be pages and ranges counted from 1, separated by commas, e.g. "1-3, 5, 8-" (at most 200 characters)';
      for (const pageRanges of ['', 'abc', '1,,2', '0', '0-3', '1-2-3', '-3', '1;2', 'all']) {
        expect(pdf({ pageRanges }), JSON.stringify(pageRanges)).to.equal(syntax);
      }
      expect(pdf({ pageRanges: '1, 5-3, 9-2' })).to.equal('pdf.pageRanges: the range 5-3 runs backwards; pdf.pageRanges: the range 9-2 runs backwards');
    });

    it('refuses a paper out of bounds and margins that leave no room', () => {
      expect(pdf({ width: '50px', height: '201in' })).to.equal(
        'pdf.width must be from 1in to 200in (96px to 19200px); pdf.height must be from 1in to 200in (96px to 19200px)',
      );
      expect(pdf({ paper: 'A4', margin: { left: '105mm', right: '105mm' } })).to.equal(
        'pdf.margin leaves no room on the paper: the margins of opposite sides must add up to less than its width and height',
      );
      // Landscape turns the paper: 220 mm of top and bottom margins fit an A4 upright (297 mm), not turned.
      expect(pdf({ margin: { top: '110mm', bottom: '110mm' } })).to.equal(undefined);
      expect(pdf({ landscape: true, margin: { top: '110mm', bottom: '110mm' } })).to.match(/^pdf.margin leaves no room/);
    });
  });
});
