import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import type { Monitor, MonitorRun } from '../../../../lib/store/monitors.ts';
import { chromiumLaunchOptions } from '../../../../services/renderer/src/pool.ts';
import { MAX_CONSOLE_ITEMS, type PageReport } from '../../../../services/renderer/src/report/page-report.ts';
import { evaluateChecks, reportRequestFor, type Checks, type Verdict } from '../../../../services/api/src/monitors/checks.ts';
import { sharedRenderer, testConfig } from '../../../support/harness.ts';
import { JourneyFailed } from '../../../../lib/errors.ts';
import { journeyFailure } from '../../../../services/api/src/monitors/run.ts';
import { auditedPage, EMAIL, PASSWORD, startDashboard, type AuditedPage, type DashboardHarness } from './support.ts';

/**
 * A monitor run's evidence on the dashboard (issue #40), in real Chromium with axe-core: the page
 * report comes from a real capture, through the renderer, of a loopback page that logs console
 * errors (one of them holding a <script> tag, more than the report keeps), loads a stylesheet that
 * 404s, shows a picture its CSP report-only policy reports, and makes a few requests; the run is recorded with the verdict of the page's checks. The
 * monitor's page shows the checks failed and passed, the console, the failed request, a waterfall
 * with one bar per request, and the vitals; an older run recorded without a report shows as before.
 */
describe('dashboard: a monitor run\'s checks, console, failed requests, waterfall and vitals (Chromium, axe-core)', function () {
  this.timeout(300_000);
  const HOSTILE = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>';
  const NOISE = MAX_CONSOLE_ITEMS + 10;
  const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
  const CHECKS: Checks = { status: [200], maxConsoleErrors: 0, maxFailedRequests: { max: 0 }, webVitals: { CLS: 'good' }, text: [{ contains: 'Plain goods' }], maxLoadTime: 120_000 };

  let fixtures: http.Server;
  let fixtureOrigin: string;
  let browser: Browser;
  let dashboard: DashboardHarness;
  let context: BrowserContext;
  let page: Page;
  let audit: AuditedPage['audit'];
  let origin: string;
  let report: PageReport;
  let verdict: Verdict;
  let picture: Buffer;

  before(async () => {
    fixtures = http.createServer((req, res) => {
      const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
        res.end(body);
      };
      if (req.url === '/shop') {
        return send(
          200,
          'text/html; charset=utf-8',
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<link rel="stylesheet" href="/style.css"><link rel="stylesheet" href="/missing.css"></head>
<body><main><h1>Shop</h1><p>Plain goods at plain prices.</p><img src="/pixel.png" alt=""></main>
<script>console.error(${JSON.stringify(HOSTILE).replaceAll('<', '\\u003c')}); for (let i = 1; i < ${NOISE}; i++) console.error('noise ' + i); console.warn('deprecated API');
fetch('/api/ok').then((r) => r.text());</script></body></html>`,
          // The picture is reported, not refused: a CSP report-only violation, kept apart from the errors.
          { 'content-security-policy-report-only': "img-src 'none'" },
        );
      }
      if (req.url === '/pixel.png') return send(200, 'image/png', PIXEL);
      if (req.url === '/style.css') return send(200, 'text/css', 'body{font-family:sans-serif}');
      if (req.url === '/api/ok') return send(200, 'application/json', '{"ok":true}');
      return send(404, 'text/plain', 'not found');
    });
    await new Promise<void>((resolve) => fixtures.listen(0, '127.0.0.1', resolve));
    fixtureOrigin = `http://127.0.0.1:${(fixtures.address() as AddressInfo).port}`;
    // The capture a monitor run makes, with the report its checks need.
    const renderer = await sharedRenderer();
    const result = await renderer.capture({ url: `${fixtureOrigin}/shop`, quality: 'standard', fullPage: false, removeAds: false, report: reportRequestFor(CHECKS) });
    if (!result.report) throw new Error('the capture has no report');
    report = result.report;
    verdict = evaluateChecks(report, CHECKS);
    picture = result.image;
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
  });
  after(async () => {
    await browser?.close();
    fixtures?.closeAllConnections();
    await new Promise<void>((resolve) => fixtures.close(() => resolve()));
  });
  beforeEach(async () => {
    dashboard = await startDashboard({}, undefined, { monitors: true });
    origin = await dashboard.listen();
    ({ context, page, audit } = await auditedPage(browser));
  });
  afterEach(async () => {
    await context.close();
    await dashboard.close();
  });

  const goto = async (path: string) => (await page.goto(`${origin}${path}`))?.status();
  const text = (selector: string) => page.$eval(selector, (el) => ((el as HTMLElement).innerText ?? el.textContent).replace(/\s+/g, ' ').trim());
  const texts = (selector: string) => page.$$eval(selector, (els) => els.map((el) => ((el as HTMLElement).innerText ?? el.textContent).replace(/\s+/g, ' ').trim()));
  const signIn = async () => {
    await goto('/dashboard/monitors');
    await page.type('#field-email', EMAIL);
    await page.type('#field-password', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  };

  /** A monitor with the checks, and two runs: an older one recorded before reports existed, and the newest with the report and its verdict. */
  async function monitorWithRuns(): Promise<{ monitor: Monitor; old: MonitorRun; latest: MonitorRun }> {
    const monitor = await dashboard.store.createMonitor({
      accountId: dashboard.account.id,
      name: 'storefront',
      siteId: null,
      schedule: '0 6 * * *',
      timeZone: 'UTC',
      suspend: false,
      historyLimit: 10,
      compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
      pages: [{ name: 'shop', url: `${fixtureOrigin}/shop`, checks: CHECKS }],
    });
    const imageId = await dashboard.monitors!.images.put(picture);
    await dashboard.store.setMonitorBaseline(monitor.id, 'shop', imageId);
    const at = (minutes: number) => new Date(Date.UTC(2026, 0, 2, 6, minutes));
    // The older run was recorded before reports existed: it has none.
    const result = { page: 'shop', diffRatio: null, regions: [], captureImageId: imageId, diffImageId: null, baselineImageId: imageId, error: null, report: null, verdict: null, journey: null };
    const old = await dashboard.store.recordMonitorRun({ monitorId: monitor.id, trigger: 'schedule', scheduledAt: at(0), startedAt: at(0), finishedAt: at(1), pages: [{ ...result, outcome: 'baseline' }] });
    const latest = await dashboard.store.recordMonitorRun({
      monitorId: monitor.id,
      trigger: 'manual',
      scheduledAt: at(10),
      startedAt: at(10),
      finishedAt: at(11),
      pages: [{ ...result, outcome: 'unchanged', diffRatio: 0, report, verdict }],
    });
    return { monitor, old, latest };
  }

  it('the report is what the page did: console errors beyond the kept ones, a 404 stylesheet, a few requests', () => {
    expect(report.console.errors.total).to.equal(NOISE);
    expect(report.console.errors.items).to.have.length(MAX_CONSOLE_ITEMS);
    expect(report.failedRequests.items).to.deep.equal([{ url: `${fixtureOrigin}/missing.css`, type: 'stylesheet', reason: 'http', status: 404 }]);
    expect(report.timeline.items.length).to.be.at.least(5);
    expect(report.console.cspReportOnly.total).to.be.at.least(1);
    expect(verdict.failures.map((failure) => failure.check)).to.deep.equal(['maxConsoleErrors', 'maxFailedRequests']);
    expect(verdict.passed).to.deep.equal(['status', 'webVitals.CLS', 'text[0].contains', 'maxLoadTime']);
  });

  it('shows the checks failed and passed, the console (escaped, bounded), the failed request, one waterfall bar per request and the vitals; passes axe', async () => {
    const { monitor } = await monitorWithRuns();
    await signIn();
    // The list says so too: a changed picture and failing checks are different outcomes.
    expect(await text('tbody [data-label="Last run"]')).to.match(/UTC unchanged; checks failing \(1 of 1 page\)$/);
    await goto(`/dashboard/monitors/${monitor.id}`);
    expect(await text('#page-shop ~ .facts')).to.include('Checks failing (maxConsoleErrors, maxFailedRequests)');

    // Each failure: the check, the value measured, the bound and the message; the passes with their declared bounds.
    const failures = await page.$$eval('#page-shop-checks ~ .table-wrap tbody tr', (rows) =>
      rows.map((row) => Array.from(row.querySelectorAll('th, td')).map((cell) => (cell as HTMLElement).innerText.trim())),
    );
    expect(failures).to.deep.equal([
      ['maxConsoleErrors', String(NOISE), '0', `${NOISE} console errors, at most 0 allowed`],
      ['maxFailedRequests', '1', '0', '1 failed request, at most 0 allowed'],
    ]);
    expect(await text('#page-shop-checks ~ p')).to.equal('Failing: 2 of 6 checks failed.');
    expect(await texts('#page-shop-checks ~ .passed li')).to.deep.equal([
      'status: status 200',
      'webVitals.CLS: at most 0.1 (good)',
      'text[0].contains: the page contains "Plain goods"',
      'maxLoadTime: at most 120000 ms',
    ]);

    // The console: the page's errors (the first kept, the total said), its warning, and the other lists apart.
    expect(await text('#page-shop-console-errors')).to.equal(`Errors (${NOISE})`);
    const errors = await texts('ol[aria-labelledby="page-shop-console-errors"] .message');
    expect(errors).to.have.length(MAX_CONSOLE_ITEMS);
    // The <script> a page logged is shown as text: no element was made of it, nothing ran.
    expect(errors[0]).to.equal(HOSTILE);
    expect(await page.$$eval('main script, main img[src="x"]', (found) => found.length)).to.equal(0);
    expect(await page.title()).to.equal('Monitor storefront · Viewfinder');
    expect(await page.content()).to.include('&lt;script&gt;document.title=');
    expect(await text('#page-shop-console-errors + .hint + .hint')).to.equal(`The report kept the first ${MAX_CONSOLE_ITEMS} of ${NOISE}.`);
    expect(await text('#page-shop-console-warnings')).to.equal('Warnings (1)');
    expect(await texts('ol[aria-labelledby="page-shop-console-warnings"] .message')).to.deep.equal(['deprecated API']);
    expect(await text('#page-shop-console-csp')).to.equal(`CSP report-only violations (${report.console.cspReportOnly.total})`);
    const csp = await texts('ol[aria-labelledby="page-shop-console-csp"] .message');
    expect(csp[0]).to.match(/report-only/i);
    expect(errors.some((message) => /report-only/i.test(message))).to.equal(false);
    expect(await text('#page-shop-console-browser')).to.equal(`The browser's own messages (${report.console.browser.total})`);

    // The failed request: URL, type, reason.
    expect(await text('#page-shop-failed')).to.equal('Failed requests (1)');
    const failed = await page.$$eval('#page-shop-failed ~ .table-wrap tbody tr', (rows) => rows.map((row) => Array.from(row.querySelectorAll('td')).map((cell) => cell.innerText.trim())));
    expect(failed).to.deep.equal([[`${fixtureOrigin}/missing.css`, 'stylesheet', 'HTTP 404']]);

    // The waterfall: one bar per timeline entry, on a shared axis; each labelled, and the same requests in a table.
    const bars = await page.$$eval('.waterfall rect.bar', (rects) => rects.map((rect) => ({ x: Number(rect.getAttribute('x')), width: Number(rect.getAttribute('width')), classes: rect.getAttribute('class') })));
    expect(bars).to.have.length(report.timeline.items.length);
    report.timeline.items.forEach((entry, i) => {
      expect(bars[i]!.classes).to.include(`bar-${['document', 'stylesheet', 'script', 'image', 'font', 'fetch', 'xhr'].includes(entry.type) ? entry.type : 'other'}`);
      if (entry.failed) expect(bars[i]!.classes).to.include('bar-failed');
    });
    // Starts in the same order as the timeline's, on the same scale: a later start is further right.
    for (let i = 1; i < bars.length; i++) {
      const [a, b] = [report.timeline.items[i - 1]!, report.timeline.items[i]!];
      if (b.startMs > a.startMs) expect(bars[i]!.x).to.be.at.least(bars[i - 1]!.x);
    }
    const labels = await texts('.waterfall text.label');
    expect(labels).to.include(`stylesheet 127.0.0.1:${new URL(fixtureOrigin).port}/missing.css`);
    expect(await page.$eval('.waterfall svg', (svg) => svg.getAttribute('aria-labelledby'))).to.equal('page-shop-waterfall-title page-shop-waterfall-desc');
    expect(await text('#page-shop-waterfall-desc')).to.match(new RegExp(`^${report.timeline.items.length} requests, the last ending at \\d+ ms, 1 failed\\. The table below lists each one\\.$`));
    await page.click('details.requests summary');
    const rows = await page.$$eval('details.requests tbody tr', (trs) => trs.map((tr) => (tr.querySelector('[data-label="URL"]') as HTMLElement).innerText));
    expect(rows).to.deep.equal(report.timeline.items.map((entry) => entry.url));

    // The vitals: value, rating, bands, and the bound the page's checks set.
    const vitals = await page.$$eval('#page-shop-vitals ~ .table-wrap tbody tr', (trs) =>
      trs.map((tr) => Object.fromEntries(Array.from(tr.querySelectorAll('[data-label]')).map((cell) => [cell.getAttribute('data-label'), (cell as HTMLElement).innerText.trim()]))),
    );
    expect(vitals.map((vital) => vital.Vital)).to.deep.equal(['LCP', 'CLS', 'FCP', 'TTFB', 'TBT']);
    expect(vitals[1]).to.deep.include({ Value: String(Number(report.vitals.CLS.value!.toFixed(3))), Bands: 'good up to 0.1, poor above 0.25', Check: 'at most 0.1 (good)' });
    expect(vitals[0]!.Bands).to.equal('good up to 2500 ms, poor above 4000 ms');
    expect(vitals[0]!.Check).to.equal('none');
    expect(vitals[3]!.Value).to.match(/^\d+ ms$/);

    // The runs table says the newest run's page failed its checks.
    expect(await text('table.stack tr.current [data-label="shop"]')).to.equal('unchanged, 0 %, checks failing');
    expect(await text('table.stack tr.current [data-label="Outcome"]')).to.equal('unchanged; checks failing (1 of 1 page)');
    await audit();
  });

  it('shows a journey that stopped (issue #41): each step, its status, time and reason, the page failing at that step, and the picture of that moment; passes axe', async () => {
    // The renderer's own failure: a journey whose second step waits for what the page never shows.
    const steps = [
      { action: 'hover' as const, selector: 'h1' },
      { action: 'click' as const, selector: '#checkout', timeout: 800 },
      { action: 'capture' as const, name: 'after' },
    ];
    const failure = await (await sharedRenderer()).capture({ url: `${fixtureOrigin}/shop`, quality: 'standard', fullPage: false, removeAds: false, steps }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).to.be.instanceOf(JourneyFailed);
    const monitor = await dashboard.store.createMonitor({
      accountId: dashboard.account.id,
      name: 'checkout',
      siteId: null,
      schedule: '0 6 * * *',
      timeZone: 'UTC',
      suspend: false,
      historyLimit: 10,
      compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
      pages: [{ name: 'shop', url: `${fixtureOrigin}/shop`, steps }],
    });
    const { journey, verdict: stopped } = await journeyFailure({ images: dashboard.monitors!.images }, failure as JourneyFailed);
    const at = new Date(Date.UTC(2026, 0, 2, 6, 0));
    await dashboard.store.recordMonitorRun({
      monitorId: monitor.id,
      trigger: 'manual',
      scheduledAt: at,
      startedAt: at,
      finishedAt: at,
      pages: [{ page: 'shop', outcome: 'failed', diffRatio: null, regions: [], captureImageId: null, diffImageId: null, baselineImageId: null, error: (failure as Error).message, report: null, verdict: stopped, journey }],
    });
    await signIn();
    expect(await goto(`/dashboard/monitors/${monitor.id}`)).to.equal(200);
    expect(await text('#page-shop ~ .facts')).to.include('Checks failing (steps[1])');
    expect(await text('#page-shop-journey + p')).to.equal('Failing: step 2 of 3 failed; the steps after it did not run.');
    const rows = await page.$$eval('#page-shop-journey ~ .table-wrap tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('th, td')).map((cell) => (cell as HTMLElement).innerText.trim())));
    expect(rows.map((row) => [row[0], row[1], row[2], row[3], row[5]])).to.deep.equal([
      ['1', 'hover', 'h1', 'ok', ''],
      ['2', 'click', '#checkout', 'failed', 'selector-not-visible'],
      ['3', 'capture', 'after', 'skipped', ''],
    ]);
    expect(rows[0]![4]).to.match(/^\d+ ms$/);
    expect(rows[2]![4]).to.equal('not run');
    // The picture of the moment it stopped, served by the dashboard like the run's other pictures.
    const src = await page.$eval('#page-shop-journey ~ .pictures img', (img) => img.getAttribute('src'));
    expect(src).to.equal(`/dashboard/monitors/${monitor.id}/images/${journey!.failureImageId}`);
    expect(await text('#page-shop-journey ~ .pictures figcaption')).to.equal('When step 2 failed');
    const served = await page.evaluate(async (url) => {
      const response = await fetch(url);
      return { status: response.status, type: response.headers.get('content-type') };
    }, src!);
    expect(served).to.deep.equal({ status: 200, type: 'image/png' });
    await audit();
  });

  it('a run recorded without a report shows what it showed before: the outcome and the pictures only', async () => {
    const { monitor, old } = await monitorWithRuns();
    await signIn();
    expect(await goto(`/dashboard/monitors/${monitor.id}?run=${old.id}`)).to.equal(200);
    expect(await text('#page-shop ~ .facts')).to.equal('Outcome baseline Diff ratio none (threshold 0.1 %) Changed regions none');
    expect(await page.$$('.evidence')).to.have.length(0);
    expect(await page.$$('.pictures img')).to.have.length(2);
    await audit();
  });
});
