import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import type { MonitorRun, NewMonitor } from '../../../../lib/store/monitors.ts';
import { chromiumLaunchOptions } from '../../../../services/renderer/src/pool.ts';
import { MONITOR_RUN_JOB } from '../../../../services/api/src/monitors/service.ts';
import { resettingPort } from '../../../support/fixture-server.ts';
import { testConfig } from '../../../support/harness.ts';
import { auditedPage, EMAIL, PASSWORD, startDashboard, type AuditedPage, type DashboardHarness } from './support.ts';

/**
 * The dashboard's Monitors pages in real Chromium, over a real monitor service (job runner, renderer,
 * pictures on disk) capturing pages served on loopback whose content the test changes between runs:
 * create through the form, Run now (shown in progress, then the baselines), a change shown with its
 * diff picture and ratio, Accept as baseline, suspend, resume, delete; operator-owned monitors, another
 * account's monitor, the form's errors and the refusals (CSRF, unknown fields, control characters,
 * bodies that are no form). axe-core audits the list, a monitor's page with its pictures and chart,
 * and the form with errors.
 */
describe('dashboard Monitors pages in a real browser (hosted, Chromium, axe-core)', function () {
  this.timeout(300_000);
  let dashboard: DashboardHarness;
  let fixtures: http.Server;
  let fixtureOrigin: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let audit: AuditedPage['audit'];
  /** What the fixture pages show; the test changes it between runs. */
  const content = { offers: '#2a9d8f', clock: 0 };
  /** While set, a request for /offers waits for it: a run stays in progress until the test releases it. */
  let hold: { promise: Promise<void>; release(): void } | undefined;
  let resetting: Awaited<ReturnType<typeof resettingPort>> | undefined;

  const fixtureHtml = (body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>fixture</title>
<style>body{margin:0;font:18px sans-serif}.box{width:400px;height:120px;margin:20px}#clock{position:absolute;left:900px;top:10px}</style></head><body>${body}</body></html>`;

  before(async () => {
    fixtures = http.createServer(async (req, res) => {
      if (req.url === '/offers' && hold) await hold.promise;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      if (req.url === '/home') {
        content.clock += 1;
        return res.end(fixtureHtml(`<h1>Home</h1><div class="box" style="background:#0057b8"></div><div id="clock">${content.clock}:00</div>`));
      }
      return res.end(fixtureHtml(`<h1>Offers</h1><div class="box" style="background:${content.offers}"></div>`));
    });
    await new Promise<void>((resolve) => fixtures.listen(0, '127.0.0.1', resolve));
    fixtureOrigin = `http://127.0.0.1:${(fixtures.address() as AddressInfo).port}`;
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
  });
  after(async () => {
    await browser?.close();
    fixtures?.closeAllConnections();
    await new Promise<void>((resolve) => fixtures.close(() => resolve()));
  });
  beforeEach(async () => {
    content.offers = '#2a9d8f';
    hold = undefined;
    dashboard = await startDashboard({}, undefined, { monitors: true });
    origin = await dashboard.listen();
    ({ context, page, audit } = await auditedPage(browser));
  });
  afterEach(async () => {
    hold?.release();
    await resetting?.close();
    resetting = undefined;
    await context.close();
    await dashboard.close();
  });

  const text = (selector: string) => page.$eval(selector, (el) => (el as HTMLElement).innerText.replace(/\s+/g, ' ').trim());
  const goto = async (path: string) => (await page.goto(`${origin}${path}`))?.status();
  const signIn = async () => {
    await goto('/dashboard/monitors');
    await page.type('#field-email', EMAIL);
    await page.type('#field-password', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(await text('h1')).to.equal('Monitors');
  };
  const click = async (buttonText: string) => {
    const [button] = await page.$$(`xpath/.//button[normalize-space()="${buttonText}"]`);
    if (!button) throw new Error(`no button "${buttonText}" on ${page.url()}`);
    await Promise.all([page.waitForNavigation(), button.click()]);
  };
  const fill = async (selector: string, value: string) => {
    await page.$eval(selector, (el) => ((el as HTMLInputElement).value = ''));
    await page.type(selector, value);
  };
  /** The run whose pages the monitor's page shows (data-run), once it differs from `previous`: the page reloads itself while the run is in progress. */
  const shownRun = async (previous: string) => {
    await page.waitForFunction((before) => {
      const shown = document.querySelector('[data-run]')?.getAttribute('data-run');
      return shown !== undefined && shown !== '' && shown !== before && !document.querySelector('[data-reload-seconds]');
    }, { timeout: 120_000 }, previous);
    return (await page.$eval('[data-run]', (el) => el.getAttribute('data-run'))) as string;
  };
  const runOf = async (id: string) => (await dashboard.store.getMonitorRun(id)) as MonitorRun;
  const result = (run: MonitorRun, name: string) => run.pages.find((candidate) => candidate.page === name)!;
  /** A form post from the signed-in page (its cookies), as a script could send it. */
  const post = (path: string, body: string, type = 'application/x-www-form-urlencoded') =>
    page.evaluate(
      async (url, data, contentType) => {
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: data, redirect: 'manual' });
        return { status: response.status, body: await response.text() };
      },
      `${origin}${path}`,
      body,
      type,
    );
  /** A monitor made directly in the store (as the operator's routes or another account would). */
  const storedMonitor = (accountId: string, overrides: Partial<NewMonitor> = {}) =>
    dashboard.store.createMonitor({
      accountId,
      name: 'storefront',
      siteId: null,
      schedule: '0 6 * * *',
      timeZone: 'UTC',
      suspend: false,
      historyLimit: 10,
      compare: { threshold: 0.001, baseline: 'accepted', pixelTolerance: 0.1 },
      pages: [{ name: 'offers', url: `${fixtureOrigin}/offers` }],
      ...overrides,
    });
  /** Runs asked for by hand (the scheduler queues each monitor's next scheduled run too). */
  const manualRuns = async (accountId: string) => (await dashboard.store.listJobs(accountId, MONITOR_RUN_JOB, 50)).filter((job) => job.payload.trigger === 'manual');
  const csrfToken = () => page.$eval('input[name="_csrf"]', (input) => (input as HTMLInputElement).value);
  /** Every picture on the page has loaded, from this dashboard, with a size and alt text. */
  const pictures = () =>
    page.$$eval('.pictures img', (images) =>
      images.map((img) => ({ alt: img.alt, width: img.getAttribute('width'), height: img.getAttribute('height'), natural: `${img.naturalWidth}x${img.naturalHeight}`, src: img.getAttribute('src') })),
    );
  const loadAllPictures = () =>
    page.$$eval('.pictures img', (images) => Promise.all(images.map((img) => (img.loading = 'eager') && img.decode())));

  it('creates a monitor through the form, runs it, shows a change with its pictures and chart, accepts the baseline, suspends, resumes and deletes it', async () => {
    const site = await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'shop', allowedDomains: ['127.0.0.1'] });
    await signIn();
    expect(await text('main')).to.include('No monitors yet.');
    expect(await page.$eval('nav [aria-current="page"]', (a) => a.textContent)).to.equal('Monitors');
    await audit();

    await Promise.all([page.waitForNavigation(), page.click('a[href="/dashboard/monitors/new"]')]);
    expect(await text('h1')).to.equal('Create a monitor');
    await page.type('#field-name', 'storefront');
    await fill('#field-schedule', '0 6 * * *');
    await fill('#field-timeZone', 'Europe/Paris');
    await page.select('#field-siteId', site.id);
    await fill('#field-threshold', '0.01');
    await page.type('#page-0-name', 'offers');
    await page.type('#page-0-url', `${fixtureOrigin}/offers`);
    await page.type('#page-1-name', 'home');
    await page.type('#page-1-url', `${fixtureOrigin}/home`);
    await page.select('#page-1-full', 'full');
    await page.type('#page-1-hide', '#clock');
    await click('Create monitor');
    const [monitor] = await dashboard.store.listMonitors(dashboard.account.id);
    expect(page.url()).to.equal(`${origin}/dashboard/monitors/${monitor!.id}?notice=monitor-created`);
    expect(monitor).to.deep.include({ name: 'storefront', schedule: '0 6 * * *', timeZone: 'Europe/Paris', siteId: site.id, suspend: false, managedBy: null });
    expect(monitor!.compare).to.deep.equal({ threshold: 0.01, baseline: 'accepted', pixelTolerance: 0.1 });
    expect(monitor!.pages).to.deep.equal([
      { name: 'offers', url: `${fixtureOrigin}/offers` },
      { name: 'home', url: `${fixtureOrigin}/home`, fullPage: true, hideSelectors: ['#clock'] },
    ]);
    expect(await text('.notice')).to.match(/^The monitor was created/);
    expect(await text('main')).to.include('No run yet.');

    // Run now, held in progress by the fixture: the page says so and reloads itself until the run is done.
    let release!: () => void;
    hold = { promise: new Promise<void>((resolve) => (release = resolve)), release: () => release() };
    await click('Run now');
    expect(page.url()).to.equal(`${origin}/dashboard/monitors/${monitor!.id}?notice=monitor-run-queued`);
    expect(await text('[data-reload-seconds]')).to.match(/^A run is (queued|running)\. This page reloads every 3 seconds until it has finished\./);
    hold.release();
    hold = undefined;
    const first = await shownRun('');
    expect((await runOf(first)).pages.map((r) => r.outcome)).to.deep.equal(['baseline', 'baseline']);
    expect(await text('#page-offers ~ .facts')).to.include('Outcome baseline');
    await loadAllPictures();
    const baselines = await pictures();
    // Per page: the baseline and the capture (the same picture on a first run); no diff yet.
    expect(baselines).to.have.length(4);
    for (const picture of baselines) {
      expect(picture.natural).to.equal(`${picture.width}x${picture.height}`);
      expect(picture.src).to.match(new RegExp(`^/dashboard/monitors/${monitor!.id}/images/img_`));
    }
    expect(baselines[0]).to.deep.include({ width: '1280', height: '720' });
    expect(baselines[0]!.alt).to.match(/^Baseline of page offers: the picture the run of .* compared with$/);

    // The offers page changes: the next run shows the diff picture and a ratio above 0; home stays the same (its clock hidden).
    content.offers = '#e76f51';
    await click('Run now');
    const second = await shownRun(first);
    const changed = await runOf(second);
    expect(result(changed, 'offers').outcome).to.equal('changed');
    expect(result(changed, 'offers').diffRatio).to.be.greaterThan(0.01);
    expect(result(changed, 'home')).to.deep.include({ outcome: 'unchanged', diffRatio: 0 });
    const offersFacts = await text('#page-offers ~ .facts');
    expect(offersFacts).to.include('Outcome changed');
    expect(offersFacts).to.match(/Diff ratio [\d.]+ % \(threshold 1 %\)/);
    expect(offersFacts).to.match(/Changed regions \d+×\d+ at \d+, \d+/);
    await loadAllPictures();
    const diffPictures = await pictures();
    expect(diffPictures).to.have.length(6);
    const diff = diffPictures.find((picture) => picture.alt.startsWith('Differences on page offers'))!;
    expect(diff.src).to.equal(`/dashboard/monitors/${monitor!.id}/images/${result(changed, 'offers').diffImageId}`);
    expect(diff.natural).to.equal('1280x720');
    // The history chart: an SVG with a title, a description stating the figures, the threshold drawn.
    const chart = await page.$eval('#chart-offers-title', (title) => ({
      title: title.textContent,
      desc: title.parentElement?.querySelector('desc')?.textContent,
      labelledBy: title.parentElement?.getAttribute('aria-labelledby'),
      threshold: title.parentElement?.querySelector('.threshold-label')?.textContent,
      points: title.parentElement?.querySelectorAll('circle').length,
    }));
    expect(chart).to.deep.include({ title: 'Diff ratio of page offers over the last 2 runs (UTC)', labelledBy: 'chart-offers-title chart-offers-desc', threshold: 'threshold 1 %', points: 1 });
    expect(chart.desc).to.match(/^Threshold 1 %\. .*: no ratio \(baseline\); .*: [\d.]+ % \(changed\)\.$/);
    // The runs table's rows (the run's pages have tables of their evidence too).
    expect(await page.$$eval('#runs tbody tr', (rows) => rows.length)).to.equal(2);
    await audit();

    // Accept the new picture: the baseline changes to this run's capture, and the next run finds no change.
    const before = (await dashboard.store.getMonitor(monitor!.id))!.baselines.offers;
    await click('Accept as baseline for page offers');
    expect(page.url()).to.equal(`${origin}/dashboard/monitors/${monitor!.id}?run=${second}&notice=monitor-baseline-accepted`);
    const after = (await dashboard.store.getMonitor(monitor!.id))!.baselines.offers;
    expect(after).to.equal(result(changed, 'offers').captureImageId);
    expect(after).to.not.equal(before);
    expect(await text('#page-offers ~ .hint')).to.equal("This capture is the page's baseline.");
    await click('Run now');
    const third = await shownRun(second);
    expect(result(await runOf(third), 'offers')).to.deep.include({ outcome: 'unchanged', diffRatio: 0, baselineImageId: after });

    // The list: schedule, next run, last run and its outcome, the largest diff, state and owner.
    await goto('/dashboard/monitors');
    const row = await page.$$eval('tbody tr', (trs) =>
      trs.map((tr) => Object.fromEntries(Array.from(tr.querySelectorAll('[data-label]')).map((cell) => [cell.getAttribute('data-label'), (cell as HTMLElement).innerText.replace(/\s+/g, ' ').trim()]))),
    );
    expect(row).to.have.length(1);
    expect(row[0]).to.deep.include({ Name: 'storefront', Schedule: '0 6 * * * Europe/Paris', 'Largest diff': '0 %', State: 'Active', Owner: 'You (dashboard or management API)' });
    expect(row[0]!['Last run']).to.match(/UTC unchanged$/);
    expect(row[0]!['Next run']).to.match(/^\d{4}-\d\d-\d\d (04|05):00 UTC$/);
    await audit();

    // Suspend and resume, then delete after a confirmation page: the runs and pictures go too.
    await goto(`/dashboard/monitors/${monitor!.id}`);
    await click('Suspend');
    expect(await text('.notice')).to.match(/^The monitor was suspended/);
    expect((await dashboard.store.getMonitor(monitor!.id))!.suspend).to.equal(true);
    await click('Resume');
    expect((await dashboard.store.getMonitor(monitor!.id))!.suspend).to.equal(false);
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/dashboard/monitors/${monitor!.id}/delete"]`)]);
    expect(await text('h1')).to.equal('Delete monitor storefront?');
    await audit();
    const image = `/dashboard/monitors/${monitor!.id}/images/${after}`;
    expect(await page.evaluate(async (url) => (await fetch(url)).status, image)).to.equal(200);
    await click('Delete monitor storefront');
    expect(page.url()).to.equal(`${origin}/dashboard/monitors?notice=monitor-deleted`);
    expect(await dashboard.store.getMonitor(monitor!.id)).to.equal(null);
    expect(await dashboard.monitors!.images.get(after!)).to.equal(null);
    // (Past the browser's cache, where pictures are kept: they never change under their id.)
    expect(await page.evaluate(async (url) => (await fetch(url, { cache: 'no-store' })).status, image)).to.equal(404);
  });

  it('shows an operator-owned monitor with its kubectl command and no edit or delete; Run now and Accept work', async () => {
    // A port that resets every connection (and that no other process can take meanwhile).
    resetting = await resettingPort();
    const gone = `http://127.0.0.1:${resetting.port}/`;
    const managed = await storedMonitor(dashboard.account.id, {
      schedule: '*/15 * * * *',
      pages: [{ name: 'offers', url: `${fixtureOrigin}/offers` }, { name: 'gone', url: gone }],
      managedBy: { kind: 'PageMonitor', namespace: 'shop', name: 'storefront', uid: 'uid-1' },
    });
    await signIn();
    expect(await text('tbody [data-label="Owner"]')).to.equal('Kubernetes: PageMonitor shop/storefront');
    await goto(`/dashboard/monitors/${managed.id}`);
    expect(await text('.managed')).to.equal('Managed by Kubernetes (PageMonitor shop/storefront). Change it with kubectl -n shop edit pagemonitors.viewfinder.dev storefront');
    expect(await page.$$('xpath/.//button[normalize-space()="Suspend"]')).to.have.length(0);
    expect(await page.$(`a[href="/dashboard/monitors/${managed.id}/delete"]`)).to.equal(null);
    expect(await page.$(`a[href="/dashboard/monitors/${managed.id}/edit"]`)).to.equal(null);
    await goto(`/dashboard/monitors/${managed.id}/edit`);
    expect(await page.$('form[action$="/edit"]')).to.equal(null);
    expect(await text('.managed')).to.include('kubectl -n shop edit pagemonitors.viewfinder.dev storefront');
    await goto(`/dashboard/monitors/${managed.id}`);
    await click('Run now');
    const first = await shownRun('');
    content.offers = '#e76f51';
    await click('Run now');
    const second = await shownRun(first);
    expect(result(await runOf(second), 'offers').outcome).to.equal('changed');
    // A page that could not be captured: its error, and no pictures but the placeholders.
    expect(result(await runOf(second), 'gone').outcome).to.equal('failed');
    expect(await text('#page-gone ~ .facts')).to.match(/Outcome failed .*Error .*ERR_CONNECTION_RESET/);
    expect(await page.$$eval('#page-gone ~ .pictures img', (images) => images.length)).to.equal(0);
    expect(await text('#page-gone ~ .pictures')).to.equal('None Baseline None Capture None Differences');
    await audit();
    await click('Accept as baseline for page offers');
    expect((await dashboard.store.getMonitor(managed.id))!.baselines.offers).to.equal(result(await runOf(second), 'offers').captureImageId);

    // Edits that bypass the page are refused with the command, and change nothing.
    const csrf = await csrfToken();
    const edit = `_csrf=${csrf}&name=storefront&schedule=%40daily&timeZone=UTC&siteId=&threshold=0.5&baseline=accepted&pageName=offers&pageUrl=${encodeURIComponent(`${fixtureOrigin}/offers`)}&pageFullPage=viewport&pageHideSelectors=`;
    for (const [path, body] of [
      [`/dashboard/monitors/${managed.id}/suspend`, `_csrf=${csrf}&suspend=true`],
      [`/dashboard/monitors/${managed.id}/edit`, edit],
      [`/dashboard/monitors/${managed.id}/delete`, `_csrf=${csrf}`],
    ] as const) {
      const refused = await post(path, body);
      expect(refused.status, path).to.equal(409);
      expect(refused.body).to.include('kubectl -n shop edit pagemonitors.viewfinder.dev storefront');
    }
    const still = await dashboard.store.getMonitor(managed.id);
    expect(still).to.deep.include({ suspend: false, schedule: '*/15 * * * *' });
  });

  it('edits a monitor with the form prefilled, keeping the page options the form does not show; refuses a bad change and saves nothing', async () => {
    const regions = [{ left: 0, top: 0, width: 1280, height: 60 }];
    // A journey and its named values (issue #41): the form does not show them, and keeps them.
    const steps = [{ action: 'fill' as const, selector: '#password', valueFrom: 'password' }];
    const credentials = { values: { password: 'pw-dashboard-kept' } };
    const monitor = await storedMonitor(dashboard.account.id, { pages: [{ name: 'offers', url: `${fixtureOrigin}/offers`, removeAds: false, ignoreRegions: regions, hideSelectors: ['.ad', '#clock'], steps, credentials }] });
    await signIn();
    await goto(`/dashboard/monitors/${monitor.id}`);
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/dashboard/monitors/${monitor.id}/edit"]`)]);
    expect(await text('h1')).to.equal('Edit monitor storefront');
    const value = (selector: string) => page.$eval(selector, (el) => (el as HTMLInputElement).value);
    expect([await value('#field-name'), await value('#field-schedule'), await value('#field-threshold'), await value('#page-0-name'), await value('#page-0-hide')]).to.deep.equal([
      'storefront',
      '0 6 * * *',
      '0.001',
      'offers',
      '.ad\n#clock',
    ]);
    await audit();

    await fill('#field-schedule', '0 0 31 4 *');
    await click('Save');
    expect(await text('#field-schedule-error')).to.equal('schedule "0 0 31 4 *" never fires');
    expect((await dashboard.store.getMonitor(monitor.id))!.schedule).to.equal('0 6 * * *');

    await fill('#field-schedule', '@hourly');
    await fill('#field-threshold', '0.05');
    await page.select('#field-baseline', 'previous');
    await page.select('#page-0-full', 'full');
    await fill('#page-0-hide', '.ad');
    await page.type('#page-1-name', 'home');
    await page.type('#page-1-url', `${fixtureOrigin}/home`);
    await click('Save');
    expect(page.url()).to.equal(`${origin}/dashboard/monitors/${monitor.id}?notice=monitor-updated`);
    const saved = (await dashboard.store.getMonitor(monitor.id))!;
    expect(saved).to.deep.include({ schedule: '@hourly', compare: { threshold: 0.05, baseline: 'previous', pixelTolerance: 0.1 } });
    expect(saved.pages).to.deep.equal([
      { name: 'offers', url: `${fixtureOrigin}/offers`, removeAds: false, ignoreRegions: regions, fullPage: true, hideSelectors: ['.ad'], steps, credentials },
      { name: 'home', url: `${fixtureOrigin}/home` },
    ]);
  });

  it("declares a page's checks through the form (fields and JSON), shows the API's errors next to the field they name with the input kept, and edits them back", async () => {
    await signIn();
    await goto('/dashboard/monitors/new');
    await page.type('#field-name', 'checked');
    await page.type('#page-0-name', 'offers');
    await page.type('#page-0-url', `${fixtureOrigin}/offers`);
    await page.type('#page-0-status', '200, 304');
    await page.type('#page-0-maxConsoleErrors', '0');
    await page.type('#page-0-maxLoadTime', 'soon');
    await page.type('#page-0-textContains', 'Offers');
    await page.type('#page-0-checks', '{"webVitals": {"LCP": "good"}');
    const value = (selector: string) => page.$eval(selector, (el) => (el as HTMLInputElement).value);
    const typed = async () => Promise.all(['#page-0-status', '#page-0-maxConsoleErrors', '#page-0-maxLoadTime', '#page-0-textContains', '#page-0-checks'].map(value));
    const invalid = (selector: string) => page.$eval(selector, (el) => [el.getAttribute('aria-invalid'), el.getAttribute('aria-describedby')]);

    // JSON that does not parse: said next to the JSON, everything typed kept.
    await click('Create monitor');
    expect(await text('#page-0-checks-error')).to.match(/^pages\[0\]\.checks is not valid JSON: /);
    expect(await typed()).to.deep.equal(['200, 304', '0', 'soon', 'Offers', '{"webVitals": {"LCP": "good"}']);
    expect(await invalid('#page-0-checks')).to.deep.equal(['true', 'checks-json-hint page-0-checks-error']);

    // The API's schema: an unknown check (said next to the JSON that has it) and a load time that is no number (next to its field).
    await fill('#page-0-checks', '{"webVitals": {"LCP": "good"}, "maxFailedRequest": 0}');
    await click('Create monitor');
    expect(await text('#page-0-checks-error')).to.equal('pages[0].checks has an unknown field: "maxFailedRequest"');
    expect(await text('#page-0-maxLoadTime-error')).to.equal('pages[0].checks.maxLoadTime must be number');
    expect(await invalid('#page-0-maxLoadTime')).to.deep.equal(['true', 'checks-load-hint page-0-maxLoadTime-error']);
    expect(await page.$('#page-0-status-error')).to.equal(null);
    expect(await typed()).to.deep.equal(['200, 304', '0', 'soon', 'Offers', '{"webVitals": {"LCP": "good"}, "maxFailedRequest": 0}']);
    await audit();

    // A check both in its field and in the JSON.
    await fill('#page-0-maxLoadTime', '3000');
    await fill('#page-0-checks', '{"maxLoadTime": 5000}');
    await click('Create monitor');
    expect(await text('#page-0-checks-error')).to.equal('pages[0].checks: maxLoadTime is set both in its field and in the JSON: keep one');
    expect(await dashboard.store.listMonitors(dashboard.account.id)).to.deep.equal([]);

    const json = { maxFailedRequests: { max: 0, ignore: ['*/analytics*'] }, webVitals: { LCP: 'good' }, text: [{ selector: 'h1', notContains: 'Error' }] };
    await fill('#page-0-checks', JSON.stringify(json));
    await click('Create monitor');
    const [monitor] = await dashboard.store.listMonitors(dashboard.account.id);
    const declared = { ...json, status: [200, 304], maxConsoleErrors: 0, maxLoadTime: 3000, text: [...json.text, { contains: 'Offers' }] };
    expect(monitor!.pages).to.deep.equal([{ name: 'offers', url: `${fixtureOrigin}/offers`, checks: declared }]);

    // The edit form shows them back in the same fields; saved unchanged, they stay as they were.
    await goto(`/dashboard/monitors/${monitor!.id}/edit`);
    const [status, consoleErrors, loadTime, textContains, rest] = await typed();
    expect([status, consoleErrors, loadTime, textContains]).to.deep.equal(['200, 304', '0', '3000', 'Offers']);
    expect(JSON.parse(rest!)).to.deep.equal(json);
    await audit();
    await click('Save');
    expect((await dashboard.store.getMonitor(monitor!.id))!.pages[0]!.checks).to.deep.equal(declared);

    // Emptied, the page has no checks.
    await goto(`/dashboard/monitors/${monitor!.id}/edit`);
    for (const selector of ['#page-0-status', '#page-0-maxConsoleErrors', '#page-0-maxLoadTime', '#page-0-textContains', '#page-0-checks']) await fill(selector, '');
    await click('Save');
    expect((await dashboard.store.getMonitor(monitor!.id))!.pages).to.deep.equal([{ name: 'offers', url: `${fixtureOrigin}/offers` }]);
  });

  it("answers 404 for another account's monitor, its pictures and its actions, and runs nothing", async () => {
    const other = await dashboard.store.createAccount({ name: 'Other' });
    const theirs = await storedMonitor(other.id, { name: 'secret-launch', pages: [{ name: 'launch', url: `${fixtureOrigin}/offers` }] });
    const theirImage = await dashboard.monitors!.images.put(Buffer.from('not shown'));
    await dashboard.store.setMonitorBaseline(theirs.id, 'launch', theirImage);
    await signIn();
    expect(await text('main')).to.not.include('secret-launch');
    for (const path of [`/dashboard/monitors/${theirs.id}`, `/dashboard/monitors/${theirs.id}/edit`, `/dashboard/monitors/${theirs.id}/delete`, `/dashboard/monitors/${theirs.id}/images/${theirImage}`]) {
      expect(await goto(path), path).to.equal(404);
      expect(await page.content(), path).to.not.include('secret-launch');
    }
    await goto('/dashboard/monitors');
    const csrf = await csrfToken();
    for (const [path, body] of [
      [`/dashboard/monitors/${theirs.id}/run`, `_csrf=${csrf}`],
      [`/dashboard/monitors/${theirs.id}/suspend`, `_csrf=${csrf}&suspend=true`],
      [`/dashboard/monitors/${theirs.id}/edit`, `_csrf=${csrf}&name=mine&schedule=%40daily&timeZone=UTC&siteId=&threshold=0.5&baseline=accepted&pageName=a&pageUrl=https%3A%2F%2Fexample.com%2F&pageFullPage=viewport&pageHideSelectors=`],
      [`/dashboard/monitors/${theirs.id}/baseline`, `_csrf=${csrf}&runId=run_x&page=launch`],
      [`/dashboard/monitors/${theirs.id}/delete`, `_csrf=${csrf}`],
    ] as const) {
      expect((await post(path, body)).status, path).to.equal(404);
    }
    expect(await manualRuns(other.id)).to.deep.equal([]);
    expect(await dashboard.store.getMonitor(theirs.id)).to.deep.include({ name: 'secret-launch', suspend: false });
  });

  it("shows the API's errors next to their fields with the input kept, and creates nothing", async () => {
    const site = await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'shop', allowedDomains: ['shop.example.com'] });
    await signIn();
    await goto('/dashboard/monitors/new');
    await page.type('#field-name', 'Store Front');
    await fill('#field-schedule', '0 0 30 2 *');
    await page.select('#field-siteId', site.id);
    await page.type('#page-0-name', 'home');
    await page.type('#page-0-url', 'https://shop.example.com/');
    await page.type('#page-1-name', 'elsewhere');
    await page.type('#page-1-url', 'https://example.org/');
    await click('Create monitor');
    expect(await text('#field-name-error')).to.match(/^name must match pattern/);
    expect(await page.$eval('#field-name', (input) => [(input as HTMLInputElement).value, input.getAttribute('aria-invalid')])).to.deep.equal(['Store Front', 'true']);
    await fill('#field-name', 'storefront');
    await click('Create monitor');
    expect(await text('#field-schedule-error')).to.equal('schedule "0 0 30 2 *" never fires');
    expect(await page.$eval('#field-schedule', (input) => (input as HTMLInputElement).value)).to.equal('0 0 30 2 *');
    await fill('#field-schedule', '@daily');
    await click('Create monitor');
    expect(await text('#page-1-error')).to.equal(`pages[1].url: example.org is not among the allowed domains of site ${site.id}`);
    expect(await page.$eval('#page-1-url', (input) => [(input as HTMLInputElement).value, input.getAttribute('aria-invalid')])).to.deep.equal(['https://example.org/', 'true']);
    expect(await page.$eval('#page-0-name', (input) => (input as HTMLInputElement).value)).to.equal('home');
    await audit();
    expect(await dashboard.store.listMonitors(dashboard.account.id)).to.deep.equal([]);

    // More than 20 pages, a threshold that is no number: the API's limits, whatever the form shows.
    const csrf = await csrfToken();
    const rows = Array.from({ length: 21 }, (_, i) => `pageName=p${i}&pageUrl=https%3A%2F%2Fshop.example.com%2F&pageFullPage=viewport&pageHideSelectors=`).join('&');
    const many = await post('/dashboard/monitors', `_csrf=${csrf}&name=many&schedule=%40daily&timeZone=UTC&siteId=&threshold=0.01&baseline=accepted&${rows}`);
    expect(many.status).to.equal(400);
    expect(many.body).to.include('id="field-pages-error">A monitor has at most 20 pages<');
    const nan = await post('/dashboard/monitors', `_csrf=${csrf}&name=nan&schedule=%40daily&timeZone=UTC&siteId=&threshold=lots&baseline=accepted&pageName=a&pageUrl=https%3A%2F%2Fshop.example.com%2F&pageFullPage=viewport&pageHideSelectors=`);
    expect(nan.status).to.equal(400);
    expect(nan.body).to.include('id="field-threshold-error">compare.threshold must be a number between 0 and 1');
    expect(await dashboard.store.listMonitors(dashboard.account.id)).to.deep.equal([]);
  });

  it('refuses a post without its CSRF token, with unknown fields, control characters or a body that is no form, and does nothing', async () => {
    await signIn();
    const monitor = await storedMonitor(dashboard.account.id);
    await goto(`/dashboard/monitors/${monitor.id}`);
    const csrf = await csrfToken();
    const form = `name=other&schedule=%40daily&timeZone=UTC&siteId=&threshold=0.01&baseline=accepted&pageName=a&pageUrl=https%3A%2F%2Fexample.com%2F&pageFullPage=viewport&pageHideSelectors=`;

    const noCsrf = await post(`/dashboard/monitors/${monitor.id}/run`, '');
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body).to.include('Invalid or missing CSRF token');
    expect((await post(`/dashboard/monitors/${monitor.id}/run`, '_csrf=wrong')).status).to.equal(403);
    expect((await post(`/dashboard/monitors/${monitor.id}/delete`, '')).status).to.equal(403);
    expect((await post('/dashboard/monitors', form)).status).to.equal(403);

    const unknown = await post('/dashboard/monitors', `_csrf=${csrf}&${form}&accountId=acct_other`);
    expect(unknown.status).to.equal(400);
    expect(unknown.body).to.include('Unknown field: \\"accountId\\"');
    const control = await post('/dashboard/monitors', `_csrf=${csrf}&${form.replace('name=other', 'name=oth%00er')}`);
    expect(control.status).to.equal(400);
    expect(control.body).to.match(/id="field-name-error">name contains a control character \(U\+0000\)/);
    const misaligned = await post('/dashboard/monitors', `_csrf=${csrf}&${form}&pageName=b`);
    expect(misaligned.status).to.equal(400);
    expect(misaligned.body).to.include('The page rows do not line up');
    expect((await post('/dashboard/monitors', `_csrf=${csrf}&name=%ZZ`)).status).to.equal(400);
    expect((await post('/dashboard/monitors', JSON.stringify({ _csrf: csrf, name: 'json' }), 'application/json')).status).to.equal(415);
    expect((await post(`/dashboard/monitors/${monitor.id}/suspend`, `_csrf=${csrf}&suspend=maybe`)).status).to.equal(400);

    expect((await dashboard.store.listMonitors(dashboard.account.id)).map((m) => m.name)).to.deep.equal(['storefront']);
    expect(await dashboard.store.getMonitor(monitor.id)).to.deep.include({ suspend: false });
    expect(await manualRuns(dashboard.account.id)).to.deep.equal([]);
  });
});
