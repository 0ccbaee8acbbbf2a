import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { NetworkMonitor } from '../../../services/renderer/src/capture/network-monitor.ts';
import { chromiumLaunchOptions } from '../../../services/renderer/src/pool.ts';
import { testConfig } from '../../support/harness.ts';

/**
 * What the smart wait counts as the page's requests in flight. The server holds some requests open
 * until the test ends, so whether the monitor counts them shows without timing anything.
 */
describe('network monitor (real Chromium)', function () {
  this.timeout(30_000);
  const HELD = new Set(['/favicon.ico', '/icon.png', '/data']);
  const PAGES: Record<string, string> = {
    '/no-icon': '<p>A page with no icon of its own: the browser asks for /favicon.ico.</p>',
    '/declared-icon': '<link rel="icon" href="/icon.png"><p>A page that names its icon.</p>',
    '/fetching': '<link rel="icon" href="data:,"><p>A page that fetches its data.</p><script>fetch("/data")</script>',
  };
  let browser: Browser;
  let page: Page;
  let server: http.Server;
  let origin: string;
  const held: http.ServerResponse[] = [];
  const arrivals = new Map<string, () => void>();

  before(async () => {
    server = http.createServer((req, res) => {
      const { pathname } = new URL(req.url ?? '/', 'http://loopback');
      arrivals.get(pathname)?.();
      if (HELD.has(pathname)) return void held.push(res);
      res.writeHead(PAGES[pathname] ? 200 : 404, { 'content-type': 'text/html', 'cache-control': 'no-store' });
      res.end(PAGES[pathname] ?? '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
  });
  beforeEach(async () => {
    page = await (await browser.createBrowserContext()).newPage();
  });
  afterEach(async () => {
    await page.browserContext().close();
    for (const res of held.splice(0)) res.end();
  });
  after(async () => {
    await browser?.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /**
   * Loads `pathname` with a monitor on the page; resolves once the request for `heldPath` is held
   * by the server and the monitor has been told of it (a listener added after the monitor's runs
   * after it).
   */
  async function loadUntilHeld(pathname: string, heldPath: string): Promise<NetworkMonitor> {
    const monitor = new NetworkMonitor(page, { longRequestMs: 60_000 });
    const told = new Promise<void>((resolve) => page.on('request', (request) => new URL(request.url()).pathname === heldPath && resolve()));
    const arrived = new Promise<void>((resolve) => arrivals.set(heldPath, resolve));
    await page.goto(`${origin}${pathname}`, { waitUntil: 'load' });
    await Promise.all([told, arrived]);
    return monitor;
  }

  it("does not count the browser's fetch of /favicon.ico, still open, as the page's request", async () => {
    const monitor = await loadUntilHeld('/no-icon', '/favicon.ico');
    expect(monitor.pending()).to.equal(0);
    expect(await monitor.waitForQuiet(performance.now())).to.equal(true);
    monitor.stop();
  });

  it('does not count the fetch of the icon a <link rel="icon"> names, still open', async () => {
    const monitor = await loadUntilHeld('/declared-icon', '/icon.png');
    expect(monitor.pending()).to.equal(0);
    monitor.stop();
  });

  it("counts the page's own fetch, still open", async () => {
    const monitor = await loadUntilHeld('/fetching', '/data');
    expect(monitor.pending()).to.equal(1);
    monitor.stop();
  });
});
