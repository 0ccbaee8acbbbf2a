import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { startDocCorpusServer } from '../support/doc-corpus.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import { appWith, sharedRenderer } from '../support/harness.ts';
import { parsePdfInfo, pdfInfo, rawBytes } from '../support/pdf.ts';

/**
 * docs/capture-options.md's PDF of Python's documentation: the request as the page writes it, sent
 * to the service for Debian's copy of the page (served on loopback as the page's http.server
 * would), and pdfinfo's lines as the page prints them.
 */
const DOC = readFileSync(new URL('../../docs/capture-options.md', import.meta.url), 'utf8');
const SECTION = DOC.slice(DOC.indexOf("### A PDF of Python's documentation"));
/** Where the page's `python3 -m http.server -d /usr/share/doc/python3-doc/html 8000` serves it. */
const DOC_ORIGIN = 'http://127.0.0.1:8000/';

describe("docs/capture-options.md: the PDF of Python's documentation (real Chromium, pdfinfo)", function () {
  this.timeout(60_000);
  let corpus: FixtureServer;

  before(async () => {
    corpus = await startDocCorpusServer();
  });
  after(() => corpus.close());

  it('makes the PDF that the page shows: its title, page count and page size, as pdfinfo prints them', async () => {
    const body = /-d '(\{.*?\})'/.exec(SECTION)?.[1];
    const printed = /```text\n([\s\S]*?)```/.exec(SECTION)?.[1];
    expect(body, 'the curl body in the section').to.be.a('string');
    expect(printed, "pdfinfo's lines in the section").to.be.a('string');
    const documented = JSON.parse(body as string) as { url: string };
    expect(documented.url.startsWith(DOC_ORIGIN)).to.equal(true);
    expect(/-H 'Accept: application\/pdf'/.test(SECTION)).to.equal(true);

    const url = corpus.url(`/python/${documented.url.slice(DOC_ORIGIN.length)}`);
    const response = await request(appWith(await sharedRenderer()).callback())
      .post('/screenshot')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/pdf')
      .send({ ...documented, url })
      .buffer(true)
      .parse(rawBytes);
    expect(response.status).to.equal(200);
    expect(response.type).to.equal('application/pdf');

    const actual = await pdfInfo(response.body as Buffer);
    const expected = parsePdfInfo(printed as string);
    for (const field of ['Title', 'Pages', 'Page size']) expect(actual.fields[field], field).to.equal(expected.fields[field]);
  });
});
