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

  it('differs between sites, and between a site and the self-hosted mode', () => {
    const keys = new Set([cacheKey(base, selfHosted), cacheKey(base, { mode: 'hosted', siteId: 'site_a' }), cacheKey(base, { mode: 'hosted', siteId: 'site_b' })]);
    expect(keys.size).to.equal(3);
  });
});
