import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import type Koa from 'koa';
import { PNG } from 'pngjs';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, decodeDataUri, startRenderer, testConfig } from '../../support/harness.ts';

const GREEN: [number, number, number] = [0, 255, 0];

/** Pages that try to hang, block or escape a capture: each ends in a capture or a precise error. */
describe('hostile pages end in a clear outcome (real Chromium)', () => {
  let fixtures: FixtureServer;
  let app: Koa;
  const env = { SMART_WAIT_MAX_MS: '4000', RENDER_CONCURRENCY: '1' };

  before(async () => {
    fixtures = await startFixtureServer();
    app = appWith(await startRenderer(testConfig(env)), env);
  });
  after(() => fixtures.close());

  /** Captures `path`, with removeAds off unless `options` say otherwise. */
  const capture = (path: string, options: Record<string, unknown> = { removeAds: false }) =>
    request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url: fixtures.url(path), ...options });

  it('a page that never stops loading is captured with what it has', async () => {
    const response = await capture('/never-loads');
    expect(response.status).to.equal(200);
    expect(decodeDataUri(response.body.image).rgb(100, 100)).to.deep.equal(GREEN);
  });

  it('an infinite redirect is a 500 that names it', async () => {
    const response = await capture('/redirect-loop');
    expect(response.status).to.equal(500);
    expect(response.body).to.deep.equal({ success: false, error: 'Screenshot generation failed: net::ERR_TOO_MANY_REDIRECTS' });
  });

  it('alert, confirm, prompt and beforeunload dialogs are dismissed and the page is captured', async () => {
    const response = await capture('/dialogs');
    expect(response.status).to.equal(200);
    expect(decodeDataUri(response.body.image).rgb(100, 100)).to.deep.equal(GREEN);
  });

  it('window.open pop-ups are blocked and the opener is captured', async () => {
    const response = await capture('/popups');
    expect(response.status).to.equal(200);
    expect(decodeDataUri(response.body.image).rgb(100, 100)).to.deep.equal(GREEN);
  });

  it('a download is a 500 that says the URL is a download, and nothing is written', async () => {
    const response = await capture('/download');
    expect(response.status).to.equal(500);
    expect(response.body.error).to.equal('Screenshot generation failed: the URL is a download (Content-Disposition: attachment), not a page');
  });

  it('an image URL is captured as Chromium shows it', async () => {
    const response = await capture('/file.png');
    expect(response.status).to.equal(200);
    const image = decodeDataUri(response.body.image);
    expect(image.rgb(640, 360)).to.deep.equal([0, 0, 255]); // the 300x200 blue image, centred
  });

  it('a JSON URL is captured as text', async () => {
    const response = await capture('/file.json');
    expect(response.status).to.equal(200);
    expect(decodeDataUri(response.body.image).png.width).to.equal(1280);
  });

  it('a PDF URL ends in a capture or a precise error, never a hang', async () => {
    const response = await capture('/file.pdf');
    expect([200, 500]).to.include(response.status);
    if (response.status === 200) expect(decodeDataUri(response.body.image).png.width).to.equal(1280);
    else expect(response.body.error).to.match(/^Screenshot generation failed: the URL answered with application\/pdf/);
  });

  it('a page whose requestAnimationFrame and setTimeout never call back is captured with removeAds on (the default)', async () => {
    // The cleaning waits for the frame the picture needs through the page's own functions: bounded from outside.
    const response = await capture('/no-callbacks', {});
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(decodeDataUri(response.body.image).rgb(100, 100)).to.deep.equal(GREEN);
  });

  it('a long page whose requestAnimationFrame and setTimeout never call back is captured whole with fullPage', async () => {
    // Scrolling it for its lazy content waits for two of its frames after each step: bounded from outside.
    const response = await capture('/no-callbacks?height=3000', { fullPage: true, removeAds: false });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const image = decodeDataUri(response.body.image);
    expect(image.png.height).to.be.at.least(3000);
    expect(image.rgb(100, 2900)).to.deep.equal(GREEN);
  });

  it('a cookie notice is answered on a page whose requestAnimationFrame and setTimeout never call back', async () => {
    // After the click, the notice's closing transition is waited for through the page's own timers and frames: bounded from outside.
    const response = await capture('/no-callbacks?notice=1', {});
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const image = decodeDataUri(response.body.image);
    expect(image.rgb(100, 100)).to.deep.equal(GREEN);
    expect(image.rgb(640, 700), 'where the notice was').to.deep.equal([255, 255, 255]);
  });

  it('after all of the above, the pool still captures normally', async () => {
    const response = await capture('/geometry');
    expect(response.status).to.equal(200);
    expect(decodeDataUri(response.body.image).rgb(5, 5)).to.deep.equal([255, 0, 0]);
  });

  it('a page that keeps changing forever is captured at the cap', async () => {
    const page = `/echo?html=${encodeURIComponent(
      '<body style="margin:0;background:#00ff00"><p id="t"></p><script>let n=0;(function tick(){document.getElementById("t").textContent=n++;requestAnimationFrame(tick)})()</script>',
    )}`;
    const response = await capture(page);
    expect(response.status).to.equal(200);
    expect(PNG.sync.read(decodeDataUri(response.body.image).bytes).width).to.equal(1280);
  });

  it('a site that resets its kept-alive connection under the next request is captured every time', async () => {
    // A connection that has answered resets under the page's next request (Chromium's favicon
    // request aside), as a server whose idle timeout runs out just when a request reaches it: the
    // guard's proxy, which keeps connections to origins alive, sends the request again on a new
    // one, as Chromium does on its own.
    const served = new WeakMap<Socket, number>();
    let resets = 0;
    const origin = http.createServer((req, res) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (req.url === '/favicon.ico') {
        res.writeHead(404).end();
        return;
      }
      if (count > 1) {
        resets += 1;
        req.socket.resetAndDestroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end('<body style="margin:0;background:#0f0"></body>');
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/`;
      for (const attempt of [1, 2, 3]) {
        const response = await request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url, removeAds: false });
        expect(response.status, `capture ${attempt}: ${JSON.stringify(response.body).slice(0, 200)}`).to.equal(200);
        expect(decodeDataUri(response.body.image).rgb(100, 100)).to.deep.equal(GREEN);
      }
      expect(resets, 'requests reset on a kept-alive connection (and sent again)').to.be.at.least(1);
    } finally {
      origin.closeAllConnections();
      await new Promise<void>((resolve) => origin.close(() => resolve()));
    }
  });
});
