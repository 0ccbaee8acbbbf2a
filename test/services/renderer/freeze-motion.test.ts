import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { diffPngs } from '../../../services/api/src/monitors/diff/diff.ts';
import { PROFILES } from '../../../services/renderer/src/capture/profiles.ts';
import { parseCaptureRequest } from '../../../services/renderer/src/protocol.ts';
import type { CaptureRequest, Renderer } from '../../../services/renderer/src/renderer.ts';
import { startRenderer, testConfig } from '../../support/harness.ts';

/**
 * freezeMotion, the option monitor runs set: the same unchanged page, full of motion, captured 10
 * times in a row in real Chromium gives 10 pictures with 0 changed pixels between them; a ticking
 * clock, which no freezing stops, is masked by hideSelectors or by an ignore region.
 */
const MOVING_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>moving</title><style>
  html { scroll-behavior: smooth; }
  body { margin: 0; font: 16px sans-serif; height: 3000px; }
  @keyframes spin { to { transform: rotate(360deg); } }
  @keyframes fade { from { opacity: 0; } to { opacity: 1; } }
  @keyframes slide { from { margin-left: 0; } to { margin-left: 400px; } }
  .spinner { width: 80px; height: 80px; border: 12px solid #ddd; border-top-color: #0057b8; border-radius: 50%; animation: spin 0.8s linear infinite; }
  .banner { animation: fade 2s ease-in 1 both; background: #b80057; color: #fff; padding: 20px; }
  .slider { width: 100px; height: 40px; background: #2a9d8f; animation: slide 3s ease-in-out infinite alternate; }
  .grow { width: 100px; height: 30px; background: #e9c46a; transition: width 5s linear, background-color 5s linear; }
  .grow.wide { width: 900px; background: #264653; }
  #pulse { width: 60px; height: 60px; background: #f4a261; }
  input { font-size: 24px; margin: 20px; }
</style></head><body>
  <div class="banner">Spring sale</div>
  <div class="spinner"></div>
  <div class="slider"></div>
  <div class="grow" id="grow"></div>
  <div id="pulse"></div>
  <input id="field" value="search the shop" autofocus>
  <p id="target" style="margin-top: 1200px">anchor</p>
  <script>
    document.getElementById('pulse').animate([{ transform: 'scale(1)' }, { transform: 'scale(1.6)' }], { duration: 700, iterations: Infinity, direction: 'alternate' });
    addEventListener('load', () => {
      setTimeout(() => document.getElementById('grow').classList.add('wide'), 30);
      const field = document.getElementById('field');
      field.focus();
      field.setSelectionRange(6, 6);
      window.scrollTo({ top: 40, behavior: 'smooth' });
    });
  </script>
</body></html>`;

/**
 * A clock that ticks every 50 ms, at CSS (100, 200), 160 x 40, on an otherwise still page. It shows
 * the wall clock, not the time since the page loaded: two captures of fresh pages can be taken at the
 * same moment after load, and would then show the same time. Its viewport
 * meta makes the page's CSS pixels the picture's on the mobile profile too: ignore regions are in the
 * picture's CSS pixels (device pixels / device scale factor), which a zoomed-out mobile page's are not.
 */
const CLOCK_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>clock</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>
  body { margin: 0; font: 16px sans-serif; }
  #clock { position: absolute; left: 100px; top: 200px; width: 160px; height: 40px; font: 28px monospace; }
</style></head><body>
  <h1>Opening hours</h1><p>Monday to Friday, 9 to 5.</p>
  <div id="clock"></div>
  <script>
    const clock = document.getElementById('clock');
    const tick = () => { clock.textContent = String(Date.now() % 100000000).padStart(8, '0'); };
    tick();
    setInterval(tick, 50);
  </script>
</body></html>`;

describe('freezeMotion: deterministic monitor captures (real Chromium)', function () {
  this.timeout(300_000);
  let server: http.Server;
  let origin: string;
  let renderer: Renderer;

  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.url === '/clock' ? CLOCK_PAGE : MOVING_PAGE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    renderer = await startRenderer(testConfig({ RENDER_CONCURRENCY: '1' }));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const request = (path: string, extra: Partial<CaptureRequest> = {}): CaptureRequest => ({
    url: `${origin}${path}`,
    quality: 'standard',
    fullPage: false,
    removeAds: false,
    ...extra,
  });

  /** Changed pixels of each capture against the first, with no colour tolerance at all. */
  async function changedAcross(runs: number, capture: CaptureRequest, ignoreRegions: Array<{ left: number; top: number; width: number; height: number }> = []): Promise<number[]> {
    const images: Buffer[] = [];
    for (let run = 0; run < runs; run += 1) images.push((await renderer.capture(capture)).image);
    const deviceScaleFactor = PROFILES[capture.quality].viewport.deviceScaleFactor;
    const [first, ...rest] = images as [Buffer, ...Buffer[]];
    return Promise.all(rest.map(async (image) => (await diffPngs(first, image, { pixelTolerance: 0, ignoreRegions, deviceScaleFactor })).changedPixels));
  }

  it('the moving page really moves without it (the control)', async () => {
    // Captured at different times after load (a quarter turn of the spinner apart), so that the
    // control does not depend on where the smart wait happens to stop.
    const images: Buffer[] = [];
    for (const wait of [1000, 1200, 1400]) images.push((await renderer.capture(request('/moving', { wait }))).image);
    const [first, ...rest] = images as [Buffer, ...Buffer[]];
    const changed = await Promise.all(rest.map(async (image) => (await diffPngs(first, image, { pixelTolerance: 0, ignoreRegions: [], deviceScaleFactor: 1 })).changedPixels));
    expect(Math.min(...changed), 'every capture differs from the first').to.be.greaterThan(0);
  });

  it('captures the moving page 10 times in a row with 0 changed pixels', async () => {
    const changed = await changedAcross(10, request('/moving', { freezeMotion: true }));
    expect(changed).to.deep.equal(new Array(9).fill(0));
  });

  it('also in a full-page capture', async () => {
    const changed = await changedAcross(2, request('/moving', { freezeMotion: true, fullPage: true }));
    expect(changed).to.deep.equal([0]);
  });

  it('does not stop a clock that script ticks: hideSelectors masks it', async () => {
    const ticking = await changedAcross(2, request('/clock', { freezeMotion: true }));
    expect(ticking[0], 'the clock changed between two captures').to.be.greaterThan(0);
    const hidden = await changedAcross(3, request('/clock', { freezeMotion: true, hideSelectors: ['#clock'] }));
    expect(hidden).to.deep.equal([0, 0]);
  });

  it('ignoreRegions (CSS pixels) mask the clock at a device scale factor of 2', async () => {
    const clock = { left: 100, top: 200, width: 160, height: 40 };
    const changed = await changedAcross(3, request('/clock', { freezeMotion: true, quality: 'mobile' }), [clock]);
    expect(changed).to.deep.equal([0, 0]);
    const unmasked = await changedAcross(2, request('/clock', { freezeMotion: true, quality: 'mobile' }), [{ ...clock, width: 80 }]);
    expect(unmasked[0], 'half the clock left unmasked still changes').to.be.greaterThan(0);
  });

  it('is a renderer protocol field (the API sets it for monitor runs) and a boolean', () => {
    expect(parseCaptureRequest({ ...request('/moving'), freezeMotion: true }).freezeMotion).to.equal(true);
    expect(() => parseCaptureRequest({ ...request('/moving'), freezeMotion: 'yes' })).to.throw(/freezeMotion must be boolean/);
  });
});
