import { expect } from 'chai';
import { validateScreenshotBody } from '../../../services/api/src/routes/screenshot.ts';

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
        'format must be one of png, jpeg, webp',
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
});
