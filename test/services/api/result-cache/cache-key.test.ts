import { expect } from 'chai';
import { cacheKey } from '../../../../services/api/src/result-cache/result-cache.ts';
import type { CaptureRequest } from '../../../../services/renderer/src/renderer.ts';

const base: CaptureRequest = { url: 'https://example.com/page', quality: 'standard', fullPage: false, removeAds: true };
const selfHosted = { mode: 'self-hosted' } as const;

describe('result cache key: the normalized request and its scope', () => {
  it('is the same whether a default is spelled out or left implicit', () => {
    const key = cacheKey(base, selfHosted);
    expect(cacheKey({ ...base, format: 'png', darkMode: false, reducedMotion: false, hideSelectors: [] }, selfHosted)).to.equal(key);
    expect(cacheKey({ ...base, format: 'jpeg' }, selfHosted)).to.equal(cacheKey({ ...base, format: 'jpeg', imageQuality: 80 }, selfHosted));
  });

  it('is the same for URLs that are the same URL, and for hideSelectors in another order or repeated', () => {
    expect(cacheKey({ ...base, url: 'HTTPS://EXAMPLE.com:443/page' }, selfHosted)).to.equal(cacheKey(base, selfHosted));
    expect(cacheKey({ ...base, hideSelectors: ['.b', '.a', '.b'] }, selfHosted)).to.equal(cacheKey({ ...base, hideSelectors: ['.a', '.b'] }, selfHosted));
  });

  it('differs for every option that changes the picture', () => {
    const variants: Partial<CaptureRequest>[] = [
      { url: 'https://example.com/other' },
      { quality: 'mobile' },
      { wait: 1000 },
      { fullPage: true },
      { removeAds: false },
      { format: 'webp' },
      { selector: '#a' },
      { waitForSelector: '#a' },
      { hideSelectors: ['#a'] },
      { darkMode: true },
      { reducedMotion: true },
    ];
    const keys = new Set([cacheKey(base, selfHosted), ...variants.map((v) => cacheKey({ ...base, ...v }, selfHosted))]);
    expect(keys.size).to.equal(variants.length + 1);
    expect(cacheKey({ ...base, format: 'jpeg', imageQuality: 50 }, selfHosted)).to.not.equal(cacheKey({ ...base, format: 'jpeg', imageQuality: 51 }, selfHosted));
  });

  it("an image's key is what it was before PDFs existed (entries stored then still answer)", () => {
    // Computed with the code of the commit before format pdf.
    expect(cacheKey(base, selfHosted)).to.equal('aca9cfa2f272078b2c4ce2f5b9d878b76aeef9d8083ac683688e2a6c7381ffd1');
    expect(cacheKey({ ...base, format: 'webp', imageQuality: 70, hideSelectors: ['.a'] }, { mode: 'hosted', siteId: 's1' })).to.equal(
      'e9e7cb63c334fc219f4039db257a16c4f9f7db0e3262e0637ab91461e9d77b68',
    );
  });

  it('a PDF: defaults spelled out or implicit are one key, every option that changes the document another', () => {
    const pdf: CaptureRequest = { ...base, format: 'pdf' };
    const key = cacheKey(pdf, selfHosted);
    expect(cacheKey({ ...pdf, pdf: {} }, selfHosted)).to.equal(key);
    expect(cacheKey({ ...pdf, pdf: { paper: 'A4', landscape: false, printBackground: true, emulateMedia: 'print', margin: { top: '0mm' } } }, selfHosted)).to.equal(key);
    expect(cacheKey({ ...pdf, pdf: { width: '210mm', height: '297mm' } }, selfHosted)).to.equal(key);
    expect(cacheKey({ ...pdf, pdf: { pageRanges: '1-2,4' } }, selfHosted)).to.equal(cacheKey({ ...pdf, pdf: { pageRanges: ' 1 - 2 , 4 ' } }, selfHosted));
    const variants: CaptureRequest['pdf'][] = [
      { paper: 'Letter' },
      { landscape: true },
      { width: '100mm', height: '100mm' },
      { margin: { left: '1mm' } },
      { printBackground: false },
      { pageRanges: '1' },
      { emulateMedia: 'screen' },
    ];
    const keys = new Set([key, cacheKey(base, selfHosted), ...variants.map((options) => cacheKey({ ...pdf, pdf: options }, selfHosted))]);
    expect(keys.size).to.equal(variants.length + 2);
  });

  it('differs between sites, and between a site and the self-hosted mode', () => {
    const keys = new Set([cacheKey(base, selfHosted), cacheKey(base, { mode: 'hosted', siteId: 'site_a' }), cacheKey(base, { mode: 'hosted', siteId: 'site_b' })]);
    expect(keys.size).to.equal(3);
  });

  describe('the visit options', () => {
    it('each changes the key, and a key without them is what it was', () => {
      const variants: Partial<CaptureRequest>[] = [
        { url: 'about:blank', html: '<p>a</p>' },
        { userAgent: 'x' },
        { injectCss: 'p{}' },
        { injectJs: '1' },
        { click: '#a' },
        { blockResources: ['images'] },
        { blockUrls: ['*.png'] },
        { timezone: 'Europe/Paris' },
        { locale: 'fr' },
        { geolocation: { latitude: 1, longitude: 2 } },
        { headers: { 'X-A': '1' } },
        { cookies: [{ name: 'a', value: '1' }] },
        { authorization: { type: 'bearer', token: 't' } },
      ];
      const keys = new Set([cacheKey(base, selfHosted), ...variants.map((v) => cacheKey({ ...base, ...v }, selfHosted))]);
      expect(keys.size).to.equal(variants.length + 1);
    });

    it('lists are sets, and an absent accuracy is 0', () => {
      expect(cacheKey({ ...base, blockResources: ['fonts', 'images'] }, selfHosted)).to.equal(cacheKey({ ...base, blockResources: ['images', 'fonts'] }, selfHosted));
      expect(cacheKey({ ...base, geolocation: { latitude: 1, longitude: 2 } }, selfHosted)).to.equal(
        cacheKey({ ...base, geolocation: { latitude: 1, longitude: 2, accuracy: 0 } }, selfHosted),
      );
    });

    it('credentials count by value, whatever the case of a header name or the order', () => {
      const one = cacheKey({ ...base, headers: { 'X-A': '1', 'X-B': '2' }, cookies: [{ name: 'a', value: '1' }, { name: 'b', value: '2' }] }, selfHosted);
      expect(cacheKey({ ...base, headers: { 'x-b': '2', 'x-a': '1' }, cookies: [{ name: 'b', value: '2' }, { name: 'a', value: '1' }] }, selfHosted)).to.equal(one);
      expect(cacheKey({ ...base, headers: { 'X-A': '1', 'X-B': '3' }, cookies: [{ name: 'a', value: '1' }, { name: 'b', value: '2' }] }, selfHosted)).to.not.equal(one);
      expect(cacheKey({ ...base, authorization: { type: 'basic', username: 'a', password: 'b' } }, selfHosted)).to.not.equal(
        cacheKey({ ...base, authorization: { type: 'basic', username: 'a', password: 'c' } }, selfHosted),
      );
    });
  });
});
