import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import type request from 'supertest';
import { renderLinkSignature, signRenderLink } from '../../../../lib/render-links.ts';
import { openDiskCache } from '../../../../services/api/src/result-cache/disk-cache.ts';
import type { ResultCache } from '../../../../services/api/src/result-cache/result-cache.ts';
import { startFixtureServer, type FixturePages } from '../../../support/fixture-server.ts';
import { near } from '../../../support/decode-image.ts';
import { decodedImage } from '../../../support/harness.ts';
import { pdfInfo, renderPdfPage } from '../../../support/pdf.ts';
import { startHosted, type HostedHarness } from './support.ts';

const GREEN: [number, number, number] = [0, 255, 0];

/** What a link is made of, for a request through supertest: the path and query only. */
const ORIGIN = 'http://viewfinder.test';

describe('GET /api/render: signed render links (hosted, embedded store, real Chromium)', () => {
  let fixtures: FixturePages;
  let hosted: HostedHarness;
  let cacheDir: string;
  let cache: ResultCache;
  let siteId: string;
  /** A site key of `siteId` with its id and signing secret. */
  let key: { id: string; key: string; signingSecret: string };

  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    cacheDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-render-cache-'));
    cache = await openDiskCache({ dir: cacheDir, maxBytes: 50 * 1024 * 1024 });
    hosted = await startHosted({ resultCache: cache });
    siteId = (await hosted.api(hosted.fullKey).post('/api/sites', { name: 'shop', allowedDomains: ['127.0.0.1'] }).expect(201)).body.id;
    key = await createKey({ name: 'links', siteId });
  });
  afterEach(async () => {
    await hosted.close();
    await cache.close();
    rmSync(cacheDir, { recursive: true, force: true });
  });

  async function createKey(body: Record<string, unknown>) {
    const response = await hosted.api(hosted.fullKey).post('/api/keys', body);
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return { id: response.body.id as string, key: response.body.key as string, signingSecret: response.body.signingSecret as string };
  }
  const sign = (options: Array<[string, string]>, expires?: number, signer = key) =>
    signRenderLink({ origin: ORIGIN, options, keyId: signer.id, signingSecret: signer.signingSecret, expires }).slice(ORIGIN.length);
  const get = (link: string) => hosted.api().get(link).buffer(true).parse(binary);
  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

  it('answers a signed link with the PNG itself: Content-Type, Content-Length, ETag, Cache-Control', async () => {
    const response = await get(sign([['url', fixtures.url('/geometry')]], inAnHour()));
    expect(response.status, response.text).to.equal(200);
    expect(response.headers['content-type']).to.equal('image/png');
    const bytes = response.body as Buffer;
    expect(Number(response.headers['content-length'])).to.equal(bytes.length);
    expect(response.headers.etag).to.match(/^"[\w-]{43}"$/);
    expect(response.headers['cache-control']).to.equal('public, no-cache');
    const image = decodedImage(PNG.sync.read(bytes), bytes);
    expect([image.png.width, image.png.height]).to.deep.equal([1280, 720]);
    expect(image.rgb(640, 360)).to.deep.equal(GREEN);
    expect(image.rgb(5, 5)).to.deep.equal([255, 0, 0]);
  });

  it('goes through the result cache with cacheTtl: public max-age, a hit that renders nothing, and 304 for If-None-Match', async () => {
    const link = sign([['url', fixtures.url('/simple?render-cache')], ['cacheTtl', '600']]);
    const before = fixtures.requests('/simple');
    const miss = await get(link);
    expect(miss.status, miss.text).to.equal(200);
    expect(miss.headers['viewfinder-cache']).to.equal('miss');
    expect(miss.headers['cache-control']).to.equal('public, max-age=600');
    const hit = await get(link);
    expect(hit.headers['viewfinder-cache']).to.equal('hit');
    expect(hit.headers.etag).to.equal(miss.headers.etag);
    expect(Buffer.compare(hit.body as Buffer, miss.body as Buffer)).to.equal(0);
    expect(fixtures.requests('/simple') - before).to.equal(1);

    const notModified = await hosted.api().get(link).set('If-None-Match', miss.headers.etag as string);
    expect(notModified.status).to.equal(304);
    expect(notModified.text ?? '').to.equal('');
    expect((await hosted.api().get(link).set('If-None-Match', '"something-else"')).status).to.equal(200);
    // As fetch() sends a conditional request: a list, and Cache-Control: no-cache beside it.
    const listed = await hosted.api().get(link).set('If-None-Match', `"other", W/${miss.headers.etag}`).set('Cache-Control', 'no-cache');
    expect(listed.status).to.equal(304);
  });

  it('never lets a CDN keep a link past its expiry', async () => {
    const expires = Math.floor(Date.now() / 1000) + 120;
    const response = await get(sign([['url', fixtures.url('/simple')], ['cacheTtl', '3600']], expires));
    expect(response.status).to.equal(200);
    const maxAge = Number(/max-age=(\d+)/.exec(String(response.headers['cache-control']))?.[1]);
    expect(maxAge).to.be.within(100, 120);
  });

  it('takes every option of the POST body as a parameter: format, booleans, numbers, repeated lists', async () => {
    const link = sign([
      ['url', fixtures.url('/geometry')],
      ['format', 'jpeg'],
      ['imageQuality', '90'],
      ['quality', 'mobile'],
      ['removeAds', 'false'],
      ['hideSelectors', '#tl'],
      ['hideSelectors', '#br'],
    ]);
    const response = await get(link);
    expect(response.status, response.text).to.equal(200);
    expect(response.headers['content-type']).to.equal('image/jpeg');
    expect(response.headers['viewfinder-width']).to.equal('750');
    expect((response.body as Buffer).subarray(0, 3).toString('hex')).to.equal('ffd8ff');
  });

  it('answers format=pdf with application/pdf, its options named with dots, read by poppler', async () => {
    const link = sign([
      ['url', fixtures.url('/geometry')],
      ['format', 'pdf'],
      ['pdf.paper', 'Letter'],
      ['pdf.landscape', 'true'],
      ['pdf.margin.top', '1cm'],
      ['cacheTtl', '60'],
    ]);
    const response = await get(link);
    expect(response.status, response.text).to.equal(200);
    expect(response.headers['content-type']).to.equal('application/pdf');
    const bytes = response.body as Buffer;
    expect(Number(response.headers['content-length'])).to.equal(bytes.length);
    expect(response.headers.etag).to.match(/^"[\w-]{43}"$/);
    const info = await pdfInfo(bytes);
    expect(info.pages).to.be.at.least(1);
    // Letter, landscape: 11 in by 8.5 in.
    expect(Math.round(info.widthPt)).to.equal(792);
    expect(Math.round(info.heightPt)).to.equal(612);
    const page = await renderPdfPage(bytes);
    expect(near(page.rgb(Math.floor(page.png.width / 2), Math.floor(page.png.height / 2)), GREEN)).to.equal(true);

    const bad = await hosted.api().get(sign([['url', fixtures.url('/geometry')], ['format', 'pdf'], ['pdf.paper', 'A0']]));
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.match(/pdf.paper must be one of/);
    const unknown = await hosted.api().get(sign([['url', fixtures.url('/geometry')], ['format', 'pdf'], ['pdf.colour', 'red']]));
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error).to.equal('Unknown field: "pdf.colour"');
    const proto = await hosted.api().get(sign([['url', fixtures.url('/geometry')], ['__proto__.polluted', 'yes']]));
    expect(proto.status).to.equal(400);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  describe('refusals, in the usual JSON shape', () => {
    const refused = async (link: string, status: number, text: RegExp) => {
      const response = await hosted.api().get(link);
      expect(response.status, response.text).to.equal(status);
      expect(response.headers['content-type']).to.match(/^application\/json/);
      expect(response.body.error).to.match(text);
      if (status !== 401) expect(response.body.success).to.equal(false);
      return response;
    };

    it('401 for a changed parameter, a reordered query, a wrong key id, an unsigned link, or a regenerated key', async () => {
      const link = sign([['url', fixtures.url('/simple')], ['cacheTtl', '60']], inAnHour());
      const [pathname, query] = link.split('?') as [string, string];
      const params = query.split('&');

      await refused(link.replace(encodeURIComponent('/simple'), encodeURIComponent('/geometry')), 401, /signature/);
      await refused(link.replace('cacheTtl=60', 'cacheTtl=61'), 401, /signature/);
      const reordered = [params[1], params[0], ...params.slice(2)].join('&');
      await refused(`${pathname}?${reordered}`, 401, /signature/);

      const other = await createKey({ name: 'other', siteId });
      await refused(link.replace(`key=${key.id}`, `key=${other.id}`), 401, /signature/);
      await refused(link.replace(`key=${key.id}`, 'key=key_000000000000000000000000'), 401, /signature/);
      await refused(link.replace(/&signature=.*$/, ''), 401, /not signed/);
      await refused(`${link}&cacheTtl=60`, 401, /signature/);

      await hosted.api(hosted.fullKey).post(`/api/keys/${key.id}/regenerate`).expect(200);
      await refused(link, 401, /signature/);
    });

    it('403 for an expired link, and 400 for an expires that is no Unix time', async () => {
      const expired = Math.floor(Date.now() / 1000) - 1;
      await refused(sign([['url', fixtures.url('/simple')]], expired), 403, /expired at/);
      const query = `url=${encodeURIComponent(fixtures.url('/simple'))}&key=${key.id}&expires=soon`;
      await refused(`/api/render?${query}&signature=${renderLinkSignature(query, key.signingSecret)}`, 400, /expires must be a Unix time/);
    });

    it('the rules of /api/screenshot: domains, site, options, rate limit', async () => {
      const restricted = await createKey({ name: 'restricted', siteId, restrictDomains: true });
      const localhostUrl = `http://app.localhost:${new URL(fixtures.origin).port}/simple`;
      await refused(sign([['url', localhostUrl]], undefined, restricted), 403, /allowed domains|not allowed/i);

      const full = await hosted.store.listKeys(hosted.account.id).then(async (keys) => {
        const admin = keys.find((k) => k.name === 'admin')!;
        return { id: admin.id, key: hosted.fullKey, signingSecret: (await hosted.store.getSigningSecret(admin.id))! };
      });
      await refused(sign([['url', fixtures.url('/simple')]], undefined, full), 400, /site_id is required/);
      const stranger = await hosted.store.createAccount({ name: 'Stranger' });
      const theirs = await hosted.store.createSite({ accountId: stranger.id, name: 'theirs', allowedDomains: [] });
      await refused(sign([['url', fixtures.url('/simple')], ['site_id', theirs.id]], undefined, full), 404, /not found/);
      const ok = await get(sign([['url', fixtures.url('/simple')], ['site_id', siteId]], undefined, full));
      expect(ok.status, ok.text).to.equal(200);

      await refused(sign([['url', fixtures.url('/simple')], ['colour', 'red']]), 400, /Unknown field: "colour"/);
      await refused(sign([['url', fixtures.url('/simple')], ['fullPage', 'yes']]), 400, /fullPage must be a boolean/);
      await refused(sign([['url', 'file:///etc/passwd']]), 400, /Invalid URL/);
      await refused(sign([['url', fixtures.url('/simple')], ['url', fixtures.url('/geometry')]]), 400, /url is given 2 times/);
      await refused(sign([['url', fixtures.url('/simple')], ['__proto__.polluted', 'yes']]), 400, /Unknown field: "__proto__.polluted"/);
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
      await refused(sign([['url', fixtures.url('/simple')], ['fullPage.x', 'true']]), 400, /Unknown field|must be a boolean/);

      await hosted.store.setAccountRateLimit(hosted.account.id, 1);
      const limited = sign([['url', fixtures.url('/simple')]]);
      expect((await get(limited)).status).to.equal(200);
      const second = await refused(limited, 429, /rate limit/i);
      expect(second.headers['retry-after']).to.match(/^\d+$/);
    });
  });

  it('counts usage per site and key, and marks the key used', async () => {
    const response = await get(sign([['url', fixtures.url('/simple')]]));
    expect(response.status).to.equal(200);
    const usage = await hosted.api(hosted.fullKey).get('/api/usage').expect(200);
    expect(usage.body.keys[key.id]).to.deep.equal({ captures: 1, failures: 0, bytes: (response.body as Buffer).length });
    expect(usage.body.sites[siteId].captures).to.equal(1);
    expect((await hosted.store.getKey(key.id))?.lastUsedAt).to.be.instanceOf(Date);
  });

  describe('unsigned links: the key itself in the URL', () => {
    const unsigned = (apiKey: string) => `/api/render?url=${encodeURIComponent(fixtures.url('/simple'))}&key=${apiKey}`;

    it('are refused by default, and accepted from a site key created with unsignedLinks', async () => {
      const refusal = await hosted.api().get(unsigned(key.key));
      expect(refusal.status).to.equal(403);
      expect(refusal.body.error).to.match(/does not allow unsigned render links/);

      const open = await createKey({ name: 'open', siteId, unsignedLinks: true });
      const response = await get(unsigned(open.key));
      expect(response.status, response.text).to.equal(200);
      expect(response.headers['content-type']).to.equal('image/png');

      expect((await hosted.api().get(unsigned('vf_' + 'A'.repeat(43)))).status).to.equal(401);
      expect((await hosted.api().get(`${unsigned(open.key)}&expires=${inAnHour()}`)).status).to.equal(400);
    });

    it('are never allowed to a full-access key', async () => {
      const refusal = await hosted.api(hosted.fullKey).post('/api/keys', { name: 'f', unsignedLinks: true });
      expect(refusal.status).to.equal(400);
      expect(refusal.body.error).to.match(/unsignedLinks needs a site key/);
      expect((await hosted.api().get(`${unsigned(hosted.fullKey)}&site_id=${siteId}`)).status).to.equal(403);
    });
  });
});

/** Supertest parser that keeps a binary body as a Buffer, whatever its type. */
function binary(res: request.Response, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}
