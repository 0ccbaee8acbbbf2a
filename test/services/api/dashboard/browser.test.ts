import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import request from 'supertest';
import { chromiumLaunchOptions } from '../../../../services/renderer/src/pool.ts';
import { decodeAnyDataUri, near } from '../../../support/decode-image.ts';
import { page as fixturePage, startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { decodeDataUri, startRenderer, testConfig } from '../../../support/harness.ts';
import { pdfInfo, pdfOfDataUri } from '../../../support/pdf.ts';
import { auditedPage, EMAIL, PASSWORD, startDashboard, type AuditedPage, type DashboardHarness } from './support.ts';

/**
 * The dashboard in real Chromium (puppeteer-core on Debian's Chromium), driven with the keyboard
 * and the mouse as a person would: sign in, create a site and a restricted key, capture with it
 * through /api/screenshot, change the domains, regenerate and delete; and the refusals: a wrong
 * password, a missing CSRF token, an expired session. axe-core audits every page on the way.
 */
describe('dashboard in a real browser (hosted, Chromium, axe-core)', function () {
  this.timeout(300_000);
  let dashboard: DashboardHarness;
  let fixtures: FixtureServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let audit: AuditedPage['audit'];

  before(async () => {
    fixtures = await startFixtureServer();
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
  });
  after(async () => {
    await browser?.close();
    await fixtures?.close();
  });
  beforeEach(async () => {
    dashboard = await startDashboard();
    origin = await dashboard.listen();
    ({ context, page, audit } = await auditedPage(browser));
  });
  afterEach(async () => {
    await context.close();
    await dashboard.close();
  });

  const heading = () => page.$eval('h1', (h1) => h1.textContent);
  const goto = async (path: string) => {
    const response = await page.goto(`${origin}${path}`);
    return response?.status();
  };
  /** Submits with the keyboard: focus in the form, Enter on its submit button. */
  const submit = async (buttonText: string) => {
    const [button] = await page.$$(`xpath/.//button[normalize-space()="${buttonText}"]`);
    if (!button) throw new Error(`no button "${buttonText}" on ${page.url()}`);
    await button.focus();
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  };
  const signIn = async (password = PASSWORD) => {
    await goto('/dashboard/sites');
    expect(await heading()).to.equal('Sign in');
    await page.focus('#field-email');
    await page.keyboard.type(EMAIL);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  };
  const capture = (key: string, url: string) => request(origin).post('/api/screenshot').set('X-API-Key', key).send({ url });
  const fieldError = (name: string) => page.$eval(`#field-${name}-error`, (p) => p.textContent);

  it('takes a new user from sign-in to a restricted key that captures, obeys domain changes, regenerates and is deleted', async () => {
    await goto('/dashboard/sign-in');
    await audit();
    await signIn();
    expect(await heading()).to.equal('Sites');
    await audit();

    // A site, first with a domain the management API refuses: its message sits next to the field.
    await page.type('#field-name', 'Shop');
    await page.type('#field-allowedDomains', 'https://example.com/path');
    await submit('Create site');
    expect(await fieldError('allowedDomains')).to.match(/^allowedDomains: "https:\/\/example.com\/path" is not a host name/);
    expect(await page.$eval('#field-allowedDomains', (el) => el.getAttribute('aria-invalid'))).to.equal('true');
    await audit();
    await page.$eval('#field-allowedDomains', (el) => ((el as HTMLTextAreaElement).value = ''));
    await page.type('#field-allowedDomains', '127.0.0.1');
    await submit('Create site');
    expect(page.url()).to.equal(`${origin}/dashboard/sites?notice=site-created`);
    const [site] = await dashboard.store.listSites(dashboard.account.id);
    expect(site).to.deep.include({ name: 'Shop', allowedDomains: ['127.0.0.1'] });

    // A restricted key for that site, shown once with a copy button.
    await goto('/dashboard/keys');
    await audit();
    await page.type('#field-name', 'widget');
    await page.select('#field-siteId', site!.id);
    await page.click('#field-restrictDomains');
    await submit('Create key');
    expect(await heading()).to.equal('Your new API key');
    await audit();
    const key = await page.$eval('#issued-key', (input) => (input as HTMLInputElement).value);
    expect(key).to.match(/^vf_[\w-]{43}$/);
    const signingSecret = await page.$eval('#issued-signing-secret', (input) => (input as HTMLInputElement).value);
    expect(signingSecret).to.match(/^vfs_[\w-]{43}$/);
    const [issuedKey] = await dashboard.store.listKeys(dashboard.account.id);
    expect(await dashboard.store.getSigningSecret(issuedKey!.id)).to.equal(signingSecret);
    await page.click('button[data-copy="issued-key"]');
    await page.waitForFunction(() => document.getElementById('copy-status')?.textContent !== '');
    await goto('/dashboard/keys');
    const listed = await page.$eval('tbody', (tbody) => tbody.textContent ?? '');
    expect(listed).to.include('widget').and.include('Site, restricted to its domains').and.include('Shop').and.include(`${key.slice(0, 11)}`);
    expect(await page.content()).to.not.include(key);
    expect(await page.content()).to.not.include(signingSecret);

    // The key captures an allowed host, and is refused another.
    const localhostUrl = `http://app.localhost:${new URL(fixtures.origin).port}/simple`;
    expect((await capture(key, fixtures.url('/simple'))).status).to.equal(200);
    expect((await capture(key, localhostUrl)).status).to.equal(403);

    // A domain change applies to the very next capture.
    await goto(`/dashboard/sites/${site!.id}`);
    await audit();
    await page.$eval('#field-allowedDomains', (el) => ((el as HTMLTextAreaElement).value = ''));
    await page.type('#field-allowedDomains', 'localhost');
    await submit('Save');
    expect(page.url()).to.equal(`${origin}/dashboard/sites?notice=site-updated`);
    expect((await capture(key, fixtures.url('/simple'))).status).to.equal(403);
    expect((await capture(key, localhostUrl)).status).to.equal(200);

    // Regenerate after a confirmation: the old key answers 401, the new one works.
    const [stored] = await dashboard.store.listKeys(dashboard.account.id);
    await goto(`/dashboard/keys/${stored!.id}/regenerate`);
    await audit();
    await submit('Regenerate key widget');
    const fresh = await page.$eval('#issued-key', (input) => (input as HTMLInputElement).value);
    expect(fresh).to.not.equal(key);
    expect((await capture(key, localhostUrl)).status).to.equal(401);
    expect((await capture(fresh, localhostUrl)).status).to.equal(200);

    // Delete after a confirmation: the key stops working.
    await goto(`/dashboard/keys/${stored!.id}/delete`);
    await audit();
    await submit('Delete key widget');
    expect(page.url()).to.equal(`${origin}/dashboard/keys?notice=key-deleted`);
    expect((await capture(fresh, localhostUrl)).status).to.equal(401);

    // And the site, after its confirmation page.
    await goto(`/dashboard/sites/${site!.id}/delete`);
    await audit();
    await submit('Delete site Shop');
    expect(await dashboard.store.listSites(dashboard.account.id)).to.deep.equal([]);
  });

  it('refuses a wrong password with the error on the page and no session', async () => {
    await signIn('not the password');
    expect(await heading()).to.equal('Sign in');
    expect(await page.$eval('.form-error', (p) => p.textContent)).to.equal('The email or the password is incorrect.');
    await audit();
    expect((await page.cookies()).map((c) => c.name)).to.not.include('vf_session');
    expect(await goto('/dashboard/sites')).to.equal(200);
    expect(await heading()).to.equal('Sign in');
  });

  it('refuses a form posted without its CSRF token, and creates nothing', async () => {
    await signIn();
    await page.type('#field-allowedDomains', 'example.com');
    await page.$eval('form[action="/dashboard/sites"] input[name="_csrf"]', (input) => input.remove());
    const [response] = await Promise.all([page.waitForNavigation(), page.click('form[action="/dashboard/sites"] button[type="submit"]')]);
    expect(response?.status()).to.equal(403);
    expect(await page.$eval('body', (body) => body.textContent)).to.include('Invalid or missing CSRF token');
    expect(await dashboard.store.listSites(dashboard.account.id)).to.deep.equal([]);
  });

  it('sends an expired session back to sign-in, and a post from it changes nothing', async () => {
    await signIn();
    await page.type('#field-allowedDomains', 'example.com');
    dashboard.advance(31 * 60_000);
    await submit('Create site');
    expect(await heading()).to.equal('Sign in');
    expect(await dashboard.store.listSites(dashboard.account.id)).to.deep.equal([]);
    expect(await goto('/dashboard/keys')).to.equal(200);
    expect(await heading()).to.equal('Sign in');
  });
  it('captures in Try it under the account with no key in the page, and shows it in the usage chart', async () => {
    const site = await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'Docs', allowedDomains: [] });
    await signIn();
    await goto('/dashboard/try');
    await audit();
    await page.type('#field-url', 'not a url');
    await submit('Capture');
    expect(await fieldError('url')).to.equal('Invalid URL: a valid http or https URL is required');
    await audit();
    await page.$eval('#field-url', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('#field-url', fixtures.url('/geometry'));
    await submit('Capture');
    await page.waitForSelector('img.screenshot');
    const size = await page.$eval('img.screenshot', (img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight]);
    expect(size).to.deep.equal([1280, 720]);
    await audit();
    expect(await page.content()).to.not.match(/vf_[\w-]{43}/);
    expect(await dashboard.store.listKeys(dashboard.account.id)).to.deep.equal([]);

    await goto('/dashboard/usage');
    await audit();
    expect(await page.$$('svg.chart rect.bar-captures')).to.have.length.greaterThan(0);
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = await page.$eval(`xpath/.//tr[th[normalize-space()="${today}"]]`, (row) => Array.from(row.children).map((cell) => cell.textContent));
    expect(todayRow.slice(0, 3)).to.deep.equal([today, '1', '0']);
    const totals = await page.$eval('main', (main) => main.textContent ?? '');
    expect(totals).to.include('Docs').and.include('Try it (dashboard)');
    await page.select('#field-of', `site:${site.id}`);
    await submit('Show');
    expect(page.url()).to.equal(`${origin}/dashboard/usage?of=site%3A${site.id}`);
  });

  describe('Try it with the capture options beyond the spec', () => {
    /**
     * A page whose pixels tell each option apart: the body turns black in dark mode, #motion turns
     * green with reduced motion, #banner (blue) is there to be hidden, #card is a 320x180 red box.
     */
    const optionsPage = () =>
      fixtures.url(
        `/echo?html=${encodeURIComponent(
          fixturePage('<div id="banner"></div><div id="motion"></div><div id="card"></div>', {
            style: `body{height:100vh} div{position:absolute}
              #banner{left:0;top:0;width:100px;height:100px;background:#0000ff}
              #motion{left:200px;top:0;width:100px;height:100px;background:#ffffff}
              #card{left:400px;top:200px;width:320px;height:180px;background:#ff0000}
              @media (prefers-color-scheme: dark){body{background:#000000}}
              @media (prefers-reduced-motion: reduce){#motion{background:#00ff00}}`,
          }),
        )}`,
      );

    /** Replaces a text field's value by typing, as a person would. */
    const fill = async (name: string, value: string) => {
      await page.$eval(`#field-${name}`, (el) => ((el as HTMLInputElement).value = ''));
      if (value) await page.type(`#field-${name}`, value);
    };
    /** Ticks or unticks a checkbox with the space bar. */
    const tick = async (name: string, checked: boolean) => {
      if ((await page.$eval(`#field-${name}`, (el) => (el as HTMLInputElement).checked)) === checked) return;
      await page.focus(`#field-${name}`);
      await page.keyboard.press('Space');
    };
    const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
    const shownImage = () => page.$eval('img.screenshot', (img) => ({ src: (img as HTMLImageElement).src, size: [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight] }));
    const openTry = async ({ audited = true } = {}) => {
      await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'Docs', allowedDomains: [] });
      await signIn();
      await goto('/dashboard/try');
      if (audited) await audit();
    };

    it('captures with darkMode, reducedMotion and hideSelectors, and shows the PNG with those pixels', async () => {
      await openTry();
      await fill('url', optionsPage());
      await tick('darkMode', true);
      await tick('reducedMotion', true);
      await fill('hideSelectors', '#banner\n\n  #nothing-else  ');
      await submit('Capture');
      await page.waitForSelector('img.screenshot');
      await audit();
      const shown = await shownImage();
      expect(shown.src).to.match(/^data:image\/png;base64,/);
      expect(shown.size).to.deep.equal([1280, 720]);
      const image = decodeDataUri(shown.src);
      expect(image.rgb(50, 50), 'banner hidden, dark body').to.deep.equal([0, 0, 0]);
      expect(image.rgb(250, 50), 'reduced motion').to.deep.equal([0, 255, 0]);
      expect(image.rgb(560, 290), 'card').to.deep.equal([255, 0, 0]);
      expect(await text('#result-facts')).to.include('1280×720 px, image/png');
      expect(await text('#result-cache')).to.equal('Rendered now; not cached (cache time 0).');
      // The form keeps what was sent, for the next try.
      expect(await page.$eval('#field-hideSelectors', (el) => (el as HTMLTextAreaElement).value)).to.include('#banner');
      expect(await page.$eval('#field-darkMode', (el) => (el as HTMLInputElement).checked)).to.equal(true);
    });

    it('captures a page behind basic auth with a header and a locale, and never writes the credentials back into the page', async () => {
      const seen: http.IncomingHttpHeaders[] = [];
      const expected = `Basic ${Buffer.from('ada:lovelace-secret').toString('base64')}`;
      const server = http.createServer((req, res) => {
        seen.push(req.headers);
        if (req.headers.authorization !== expected) return res.writeHead(401, { 'www-authenticate': 'Basic realm="t"' }).end();
        res.writeHead(200, { 'content-type': 'text/html' }).end('<body style="margin:0;background:#00ff00"></body>');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        await openTry();
        await fill('url', `http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        await fill('headers', 'X-Test: header-secret');
        await fill('username', 'ada');
        await fill('password', 'lovelace-secret');
        await fill('locale', 'fr-FR');
        await tick('removeAds', false);
        await submit('Capture');
        await page.waitForSelector('img.screenshot');
        await audit();
        expect(decodeDataUri((await shownImage()).src).rgb(640, 360)).to.deep.equal([0, 255, 0]);
        expect(seen.at(-1)).to.include({ authorization: expected, 'x-test': 'header-secret', 'accept-language': 'fr-FR' });
        expect(await page.content()).to.not.match(/lovelace-secret|header-secret/);
        expect(await page.$eval('#field-locale', (el) => (el as HTMLInputElement).value)).to.equal('fr-FR');
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });

    it('runs a sign-in journey from the steps field with a credential, never writes a typed value back, and shows a bad step next to the field', async () => {
      const server = http.createServer((req, res) => {
        if (req.method === 'POST') {
          let raw = '';
          req.on('data', (chunk: Buffer) => (raw += chunk));
          req.on('end', () => {
            const ok = new URLSearchParams(raw).get('password') === 'journey-secret';
            res.writeHead(303, { location: ok ? '/in' : '/', ...(ok ? { 'set-cookie': 's=1; Path=/' } : {}) }).end();
          });
          return;
        }
        const signedIn = req.url === '/in' && req.headers.cookie === 's=1';
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(signedIn ? '<body style="margin:0;background:#00ff00"><h1 id="hi">Hi</h1></body>' : '<form method="post"><input id="user" name="user"><input id="pw" name="password" type="password"><button>Go</button></form>');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        await openTry();
        await fill('url', `http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        await tick('removeAds', false);
        const steps = [
          { action: 'fill', selector: '#user', value: 'inline-typed-secret' },
          { action: 'fill', selector: '#pw', valueFrom: 'pw' },
          { action: 'press', selector: '#pw', key: 'Enter' },
          { action: 'waitFor', selector: '#hi' },
        ];
        await fill('steps', JSON.stringify(steps));
        await fill('credentials', 'pw=journey-secret');
        await submit('Capture');
        await page.waitForSelector('img.screenshot');
        await audit();
        expect(decodeDataUri((await shownImage()).src).rgb(640, 360)).to.deep.equal([0, 255, 0]);
        expect(await page.content()).to.not.match(/journey-secret|inline-typed-secret/);
        expect(JSON.parse(await page.$eval('#field-steps', (el) => (el as HTMLTextAreaElement).value))[1]).to.deep.equal(steps[1]);
        await fill('steps', '[{"action": "click"}]');
        await submit('Capture');
        expect(await fieldError('steps')).to.equal('steps[0] must be {"action": "click", "selector": ...}, with an optional "timeout"');
        await fill('steps', 'not json');
        await submit('Capture');
        expect(await fieldError('steps')).to.equal('steps must be a JSON list of steps, e.g. [{"action": "click", "selector": "#more"}]');
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });

    it('captures HTML instead of a URL, with injected CSS, and shows a mistake in a visit option next to its field', async () => {
      await openTry();
      await fill('html', '<p>hello</p>');
      await fill('injectCss', 'body { background: #0000ff }');
      await tick('removeAds', false);
      await submit('Capture');
      await page.waitForSelector('img.screenshot');
      expect(decodeDataUri((await shownImage()).src).rgb(640, 360)).to.deep.equal([0, 0, 255]);
      await fill('timezone', 'Mars/Olympus');
      await submit('Capture');
      expect(await fieldError('timezone')).to.equal('timezone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Paris)');
      await audit();
    });

    it('captures one element as JPEG, then answers the same capture from the cache, and shows a missing selector next to its field', async () => {
      await openTry();
      // Image quality applies to JPEG and WebP only: the script disables it for PNG.
      expect(await page.$eval('#field-imageQuality', (el) => (el as HTMLInputElement).disabled)).to.equal(true);
      await page.select('#field-format', 'jpeg');
      expect(await page.$eval('#field-imageQuality', (el) => (el as HTMLInputElement).disabled)).to.equal(false);
      await fill('url', optionsPage());
      await fill('imageQuality', '90');
      await fill('selector', '#card');
      await fill('cacheTtl', '600');
      await submit('Capture');
      await page.waitForSelector('img.screenshot');
      await audit();
      const shown = await shownImage();
      expect(shown.src).to.match(/^data:image\/jpeg;base64,/);
      expect(shown.size).to.deep.equal([320, 180]);
      const image = await decodeAnyDataUri(shown.src);
      expect(near(image.rgb(160, 90), [255, 0, 0]), `centre ${image.rgb(160, 90).join(',')}`).to.equal(true);
      expect(await text('#result-facts')).to.include('320×180 px, image/jpeg');
      expect(await text('#result-cache')).to.equal('Rendered now, and cached for 600 seconds.');

      // The page kept the options: the same capture again comes from the cache, with the same image.
      expect(await page.$eval('#field-imageQuality', (el) => (el as HTMLInputElement).disabled)).to.equal(false);
      await submit('Capture');
      await page.waitForSelector('img.screenshot');
      expect(await text('#result-cache')).to.equal('Served from the cache, without rendering.');
      const again = await shownImage();
      expect(again.src).to.equal(shown.src);

      await fill('selector', '#nope');
      await page.focus('button.primary');
      const [response] = await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
      expect(response?.status()).to.equal(400);
      expect(await fieldError('selector')).to.equal('No element matches selector "#nope"');
      expect(await page.$$('img.screenshot')).to.have.length(0);
      await audit();
    });

    it('prints a PDF on the paper chosen, offered as a download that pdfinfo reads', async () => {
      await openTry();
      // Paper and landscape apply to PDF only: the script disables them for the image formats.
      expect(await page.$eval('#field-paper', (el) => (el as HTMLSelectElement).disabled)).to.equal(true);
      await page.select('#field-format', 'pdf');
      expect(await page.$eval('#field-paper', (el) => (el as HTMLSelectElement).disabled)).to.equal(false);
      expect(await page.$eval('#field-imageQuality', (el) => (el as HTMLInputElement).disabled)).to.equal(true);
      await page.select('#field-paper', 'Letter');
      await tick('landscape', true);
      await fill('url', optionsPage());
      await submit('Capture');
      await page.waitForSelector('#result-pdf');
      await audit();
      expect(await page.$$('img.screenshot')).to.have.length(0);
      const link = await page.$eval('#result-pdf', (a) => ({ href: (a as HTMLAnchorElement).href, download: (a as HTMLAnchorElement).download, text: a.textContent }));
      expect(link.download).to.equal('viewfinder-capture.pdf');
      expect(link.text).to.include('Download the PDF of');
      const info = await pdfInfo(pdfOfDataUri(link.href));
      expect([info.pages, info.widthPt, info.heightPt]).to.deep.equal([1, 792, 612]);
      expect(await text('#result-facts')).to.include('First page 1056×816 CSS px, application/pdf');
      // The form keeps the PDF options for the next try.
      expect(await page.$eval('#field-paper', (el) => (el as HTMLSelectElement).value)).to.equal('Letter');
      expect(await page.$eval('#field-landscape', (el) => (el as HTMLInputElement).checked)).to.equal(true);
    });

    it('without the script, refuses an image quality for PNG next to the field, as the API does', async () => {
      await page.setJavaScriptEnabled(false);
      // axe is a script: this page was audited with the script in the tests above.
      await openTry({ audited: false });
      expect(await page.$eval('#field-imageQuality', (el) => (el as HTMLInputElement).disabled)).to.equal(false);
      await fill('url', optionsPage());
      await fill('imageQuality', '50');
      await submit('Capture');
      expect(await fieldError('imageQuality')).to.equal('imageQuality applies to jpeg and webp only: set format to one of them');
      expect(await page.$$('img.screenshot')).to.have.length(0);
    });

    it('shows the 408 of a waitForSelector that never appears next to its field', async () => {
      // A renderer with a 5 s navigation timeout, so that waiting out the selector does not take the default 30 s.
      await dashboard.close();
      dashboard = await startDashboard({}, await startRenderer(testConfig({ NAVIGATION_TIMEOUT_MS: '5000' })));
      origin = await dashboard.listen();
      await openTry();
      await fill('url', optionsPage());
      await fill('waitForSelector', '#never');
      await submit('Capture');
      expect(await fieldError('waitForSelector')).to.equal(
        'Navigation timeout: no element matching waitForSelector "#never" became visible within the navigation timeout',
      );
      await audit();
    });
  });

  it('shows sites and keys owned by the operator read-only, with the kubectl command that changes them', async () => {
    const managedBy = { namespace: 'team-a', name: 'shop', uid: 'uid-1' };
    const site = await dashboard.store.upsertManagedSite({ accountId: dashboard.account.id, name: 'shop', allowedDomains: ['example.com'], managedBy: { kind: 'Site', ...managedBy } });
    await dashboard.store.upsertManagedKey({ accountId: dashboard.account.id, name: 'shop-key', kind: 'site', siteId: site.id, managedBy: { kind: 'ApiKey', ...managedBy } });
    await signIn();
    await goto('/dashboard/sites');
    await audit();
    expect(await page.$eval('tbody', (tbody) => tbody.textContent)).to.include('kubectl -n team-a edit sites.viewfinder.dev shop');
    expect(await page.$$(`a[href="/dashboard/sites/${site.id}"]`)).to.have.length(0);
    await goto('/dashboard/keys');
    await audit();
    expect(await page.$eval('tbody', (tbody) => tbody.textContent)).to.include('kubectl -n team-a edit apikeys.viewfinder.dev shop');
    expect(await page.$$('a[href$="/regenerate"], a[href$="/delete"]')).to.have.length(0);
    await goto(`/dashboard/sites/${site.id}`);
    await audit();
    expect(await page.$$('form[action^="/dashboard/sites/"]')).to.have.length(0);
  });
});
