import { expect } from 'chai';
import { MAX_HEADER_VALUE_LENGTH, MAX_HEADERS, MAX_HTML_BYTES } from '../../../services/renderer/src/capture/visit-options.ts';
import { validateScreenshotBody } from '../../../services/api/src/routes/screenshot.ts';

const errorOf = (body: unknown) => {
  try {
    validateScreenshotBody(body);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
};

/**
 * compileValidator: the checks a schema cannot make (a time zone that exists, html's size in bytes,
 * header names the browser owns) are heard beside the schema's own mistakes, not after them
 * (issue 44): docs/capture-options.md promises every mistake at once, joined by "; ".
 */
describe('the request validator', () => {
  it("names the check's mistakes beside the schema's, in one 400", () => {
    expect(errorOf({ url: 'https://example.com/', darkMode: 'yes', timezone: 'Mars/Olympus', headers: { Cookie: 'a=b' } })).to.equal(
      ['darkMode must be a boolean', 'headers cannot set "Cookie": use cookies', 'timezone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Paris)'].join('; '),
    );
    // Two-byte characters: short enough in characters for the schema, too long in bytes for the check.
    expect(errorOf({ html: 'é'.repeat(MAX_HTML_BYTES / 2 + 1), darkMode: 'yes' })).to.equal(`darkMode must be a boolean; html must be at most ${MAX_HTML_BYTES} bytes of UTF-8`);
    expect(errorOf({ timezone: 'Mars/Olympus' })).to.equal('URL is required; timezone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Paris)');
  });

  it('leaves a field the schema refused to the schema: one message for it, and the check never sees its wrong type', () => {
    expect(errorOf({ url: 'https://example.com/', timezone: 5, headers: 'Host: x' })).to.equal(
      `headers must be an object of at most ${MAX_HEADERS} header names (HTTP tokens) to strings of at most ${MAX_HEADER_VALUE_LENGTH} characters without line breaks; timezone must be an IANA time zone, e.g. Europe/Paris`,
    );
  });
});
