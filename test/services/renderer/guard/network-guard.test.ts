import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { useGuardBed } from '../../../support/guard-bed.ts';
import { appWith, decodeDataUri, sharedRenderer } from '../../../support/harness.ts';

/**
 * The SSRF suite: fixture pages served from 127.0.0.2, the only allowlisted address, try every way
 * to reach a secret service on 127.0.0.1. The secret must see nothing, and the captures themselves
 * must still succeed (or, for a blocked top-level URL, get the documented 403).
 */
describe('network guard (real Chromium, secret on 127.0.0.1, pages on allowlisted 127.0.0.2)', function () {
  this.timeout(120_000);
  const bed = useGuardBed();

  const capture = (body: Record<string, unknown>) =>
    request(bed.app.callback()).post('/screenshot').set('Content-Type', 'application/json').send(body);
  const pageWith = (html: string) => bed.fixtures.url(`/echo?html=${encodeURIComponent(`<body style="margin:0">${html}</body>`)}`);
  const secretUrl = (host: string, pathname = '/') => `http://${host}:${bed.secret.port}${pathname}`;

  // Every spelling a page can use for the secret's address.
  const SPELLINGS = [
    '127.0.0.1',
    'localhost',
    'app.localhost',
    'LOCALHOST.',
    '2130706433',
    '0177.0.0.1',
    '0x7f.1',
    '0x7f000001',
    '127.1',
    '127.0.0.1.',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::127.0.0.1]',
    '[::1]',
  ];

  async function expectCapturedWithoutReachingSecret(html: string): Promise<void> {
    const response = await capture({ url: pageWith(html), wait: 1000 });
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(200);
    expect(response.body.success).to.equal(true);
    expect(bed.secret.hits(), 'requests that reached the secret').to.equal(0);
  }

  describe('positive controls', () => {
    it('the secret counts what reaches it', async () => {
      await fetch(secretUrl('127.0.0.1'));
      expect(bed.secret.hits()).to.equal(1);
    });

    it('without the guard (127.0.0.0/8 allowlisted) the same img does reach the secret, so the pages below really try', async () => {
      const openApp = appWith(await sharedRenderer());
      const response = await request(openApp.callback())
        .post('/screenshot')
        .set('Content-Type', 'application/json')
        .send({ url: pageWith(`<img src="${secretUrl('127.0.0.1', '/img')}">`), wait: 1000 });
      expect(response.status).to.equal(200);
      expect(bed.secret.hits()).to.be.greaterThan(0);
    });

    it('subresources of the allowlisted host do load', async () => {
      const response = await capture({ url: pageWith(`<iframe src="${bed.fixtures.url('/geometry')}" style="border:0;width:400px;height:300px"></iframe>`) });
      expect(response.status).to.equal(200);
      // /geometry paints a red square at its top-left corner and green around it.
      const image = decodeDataUri(response.body.image);
      expect(image.rgb(5, 5)).to.deep.equal([255, 0, 0]);
      expect(image.rgb(100, 100)).to.deep.equal([0, 255, 0]);
    });
  });

  describe('a blocked top-level URL answers 403 with a JSON error', () => {
    for (const host of SPELLINGS) {
      it(`http://${host}:<secret>/`, async () => {
        const response = await capture({ url: secretUrl(host) });
        expect(response.status, JSON.stringify(response.body)).to.equal(403);
        expect(response.body.success).to.equal(false);
        expect(response.body.error).to.match(/^Forbidden: .* (is|resolves to) a [a-z46-]+ address; only public addresses may be captured/);
        expect(bed.secret.hits()).to.equal(0);
      });
    }

    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://192.168.1.1/', 'http://100.64.0.1/', 'http://[fd00::1]/', 'http://[fe80::1]/', 'http://0.0.0.0/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/']) {
      it(url, async () => {
        const response = await capture({ url });
        expect(response.status, JSON.stringify(response.body)).to.equal(403);
        expect(response.body.error).to.match(/^Forbidden: /);
      });
    }

    it('a redirect from an allowed page to the secret is 403 too, and the secret sees nothing', async () => {
      const response = await capture({ url: bed.fixtures.url(`/redirect?to=${encodeURIComponent(secretUrl('127.0.0.1'))}`) });
      expect(response.status, JSON.stringify(response.body)).to.equal(403);
      expect(response.body.error).to.match(/^Forbidden: 127\.0\.0\.1 is a loopback address/);
      expect(bed.secret.hits()).to.equal(0);
    });

    it('a page that navigates itself to the secret is 403, and the secret sees nothing', async () => {
      const response = await capture({ url: pageWith(`<script>location.href = ${JSON.stringify(secretUrl('2130706433'))}</script>`), wait: 1000 });
      expect(response.status, JSON.stringify(response.body)).to.equal(403);
      expect(bed.secret.hits()).to.equal(0);
    });
  });

  describe('other schemes are rejected', () => {
    for (const url of ['file:///etc/passwd', 'data:text/html,hi', 'javascript:alert(1)', 'chrome://version', 'view-source:http://127.0.0.2/', 'ftp://127.0.0.2/', 'ws://127.0.0.2/', 'about:blank']) {
      it(`${url} as the URL is a 400`, async () => {
        const response = await capture({ url });
        expect(response.status).to.equal(400);
        expect(response.body).to.deep.equal({ success: false, error: 'Invalid URL: a valid http or https URL is required' });
      });
    }

    it('the renderer itself refuses a non-http(s) URL, whoever calls it', async () => {
      const renderer = await sharedRenderer();
      const attempt = renderer.capture({ url: 'file:///etc/passwd', quality: 'standard', fullPage: false, removeAds: false });
      await attempt.then(
        () => expect.fail('captured a file: URL'),
        (err: { status?: number }) => expect(err.status).to.equal(400),
      );
    });

    it('a file: iframe shows nothing of the file', async () => {
      const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'vf-guard-')), 'red.html');
      await fs.writeFile(file, '<body style="margin:0;background:#ff0000;height:100vh"></body>');
      const response = await capture({ url: pageWith(`<iframe src="file://${file}" style="border:0;width:100vw;height:100vh"></iframe>`), wait: 1000 });
      expect(response.status).to.equal(200);
      expect(decodeDataUri(response.body.image).rgb(640, 360)).to.not.deep.equal([255, 0, 0]);
      await fs.rm(path.dirname(file), { recursive: true });
    });
  });

  describe('subresources aimed at the secret do not load, and the capture still succeeds', () => {
    it('img, in every spelling', async () => {
      await expectCapturedWithoutReachingSecret(SPELLINGS.map((host) => `<img src="${secretUrl(host, '/img')}">`).join(''));
    });

    it('iframe, in every spelling', async () => {
      await expectCapturedWithoutReachingSecret(SPELLINGS.map((host) => `<iframe src="${secretUrl(host, '/frame')}"></iframe>`).join(''));
    });

    it('iframe through a redirect on the allowed host', async () => {
      await expectCapturedWithoutReachingSecret(`<iframe src="${bed.fixtures.url(`/redirect?to=${encodeURIComponent(secretUrl('127.0.0.1'))}`)}"></iframe>`);
    });

    it('img through a redirect on the allowed host', async () => {
      await expectCapturedWithoutReachingSecret(`<img src="${bed.fixtures.url(`/redirect?to=${encodeURIComponent(secretUrl('0x7f.1'))}`)}">`);
    });

    it('fetch and XMLHttpRequest, in every spelling', async () => {
      const urls = JSON.stringify(SPELLINGS.map((host) => secretUrl(host, '/fetch')));
      await expectCapturedWithoutReachingSecret(
        `<script>for (const u of ${urls}) { fetch(u, { mode: 'no-cors' }).catch(() => {}); const x = new XMLHttpRequest(); x.open('GET', u); x.send(); }</script>`,
      );
    });

    it('https to the secret (a CONNECT tunnel)', async () => {
      await expectCapturedWithoutReachingSecret(`<img src="https://127.0.0.1:${bed.secret.port}/tls"><script>fetch('https://localhost:${bed.secret.port}/').catch(() => {})</script>`);
    });

    it('WebSocket, ws:// and wss://, in every spelling', async () => {
      const urls = JSON.stringify(SPELLINGS.flatMap((host) => [`ws://${host}:${bed.secret.port}/ws`, `wss://${host}:${bed.secret.port}/ws`]));
      await expectCapturedWithoutReachingSecret(`<script>for (const u of ${urls}) { try { new WebSocket(u) } catch {} }</script>`);
    });

    it('a dedicated worker', async () => {
      const worker = `fetch(${JSON.stringify(secretUrl('127.0.0.1', '/worker'))}).catch(() => {})`;
      await expectCapturedWithoutReachingSecret(`<script>new Worker(URL.createObjectURL(new Blob([${JSON.stringify(worker)}], { type: 'text/javascript' })))</script>`);
    });

    it('prefetch, preconnect, dns-prefetch and preload hints', async () => {
      await expectCapturedWithoutReachingSecret(
        ['prefetch', 'preconnect', 'dns-prefetch', 'prerender'].map((rel) => `<link rel="${rel}" href="${secretUrl('127.0.0.1', `/${rel}`)}">`).join('') +
          `<link rel="preload" as="image" href="${secretUrl('127.1', '/preload')}">`,
      );
    });

    it('CSS background, font and @import', async () => {
      await expectCapturedWithoutReachingSecret(
        `<style>@import url(${secretUrl('127.0.0.1', '/import.css')}); @font-face { font-family: x; src: url(${secretUrl('127.0.0.1', '/font')}) } body { font-family: x; background: url(${secretUrl('2130706433', '/bg')}) }</style>text`,
      );
    });

    it('WebRTC towards a STUN/TURN server on the secret', async () => {
      await expectCapturedWithoutReachingSecret(
        `<script>const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${bed.secret.port}' }, { urls: 'turn:127.0.0.1:${bed.secret.port}?transport=tcp', username: 'u', credential: 'c' }] });
         pc.createDataChannel('x'); pc.createOffer().then((offer) => pc.setLocalDescription(offer));</script>`,
      );
    });

    it('a form posted to the secret from an iframe', async () => {
      await expectCapturedWithoutReachingSecret(
        `<iframe name="f"></iframe><form target="f" method="post" action="${secretUrl('127.0.0.1', '/form')}"><input name="a" value="b"></form><script>document.forms[0].submit()</script>`,
      );
    });
  });
});
