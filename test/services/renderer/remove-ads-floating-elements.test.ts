import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { PROBE_OPTIONS } from '../../../services/renderer/src/capture/prepare-page.ts';
import { installReadinessProbe } from '../../../services/renderer/src/capture/readiness-probe.ts';
import { mayFloatInPage } from '../../../services/renderer/src/capture/remove-ads/floating-elements.ts';
import { chromiumLaunchOptions } from '../../../services/renderer/src/pool.ts';
import { resettingPort } from '../../support/fixture-server.ts';
import { testConfig } from '../../support/harness.ts';

/**
 * The elements the notice and overlay passes look at, read from the style sheets: every element
 * that is fixed or sticky must be among them, however the page made it so, and where the sheets
 * cannot tell, the passes must look at every element (undefined).
 */
describe('removeAds: the elements that may float (real Chromium)', function () {
  this.timeout(30_000);
  /** Each way a page can make an element fixed or sticky, one element per way, named by its id. */
  const FLOATING = `<style>
  @import url("/imported.css");
  .rule { position: fixed; top: 0 }
  @media (min-width: 1px) { .media { position: sticky; top: 0 } }
  @supports (display: grid) { .supports { position: fixed; bottom: 0 } }
  @layer base { .layer { position: fixed; right: 0 } }
  .outer { .nested { position: fixed; left: 0 } & > .nested-child { position: sticky; top: 0 } }
  .decl { .unrelated { color: red } position: fixed; top: 10px }
  .inherits { position: fixed; top: 20px } .inherits > span { position: inherit }
  :root { --floating: fixed } .variable { position: var(--floating); top: 30px }
  .important { position: fixed !important; top: 40px }
  </style>
  <div id="rule" class="rule">rule</div>
  <div id="media" class="media">media</div>
  <div id="supports" class="supports">supports</div>
  <div id="layer" class="layer">layer</div>
  <div class="outer"><div id="nested" class="nested">nested</div><div id="nested-child" class="nested-child">nested child</div></div>
  <div id="decl" class="decl">declarations after a nested rule</div>
  <div class="inherits"><span id="inherit">inherits</span></div>
  <div id="variable" class="variable">variable</div>
  <div id="important" class="important">important</div>
  <div id="imported" class="imported">imported</div>
  <div id="inline" style="position: fixed; top: 50px">inline</div>
  <div id="adopted" class="adopted">adopted</div>
  <dialog id="modal">modal</dialog>
  <div id="popover" popover>popover</div>
  <div id="closed-host">closed shadow root</div>
  <div id="declarative-host"><template shadowrootmode="open"><style>:host { position: fixed; bottom: 20px }</style>declarative</template></div>
  ${'<p class="plain">Plain text that floats nowhere.</p>'.repeat(200)}
  <script>
  const sheet = new CSSStyleSheet();
  sheet.replaceSync('.adopted { position: sticky; top: 60px }');
  document.adoptedStyleSheets = [sheet];
  document.getElementById('modal').showModal();
  document.getElementById('popover').showPopover();
  const closed = document.getElementById('closed-host').attachShadow({ mode: 'closed' });
  closed.innerHTML = '<style>:host { position: fixed; bottom: 0 }</style><slot></slot>';
  </script>`;
  const IDS = [
    'rule', 'media', 'supports', 'layer', 'nested', 'nested-child', 'decl', 'inherit', 'variable', 'important', 'imported',
    'inline', 'adopted', 'modal', 'popover', 'closed-host', 'declarative-host',
  ];

  let browser: Browser;
  let page: Page;
  let server: http.Server;
  let otherOrigin: http.Server;
  let origin: string;
  let otherOriginUrl: string;

  const listen = async (created: http.Server, host: string) => {
    await new Promise<void>((resolve) => created.listen(0, host, resolve));
    return `http://${host}:${(created.address() as AddressInfo).port}`;
  };

  before(async () => {
    otherOrigin = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end('.elsewhere { position: fixed }');
    });
    otherOriginUrl = await listen(otherOrigin, '127.0.0.2');
    const pages: Record<string, [string, string]> = {
      '/floating': ['text/html', `<!doctype html><html><head><title>floating</title></head><body>${FLOATING}</body></html>`],
      '/imported.css': ['text/css', '.imported { position: fixed; top: 70px }'],
      '/other-origin-sheet': ['text/html', `<!doctype html><link rel="stylesheet" href="${otherOriginUrl}/style.css"><p>text</p>`],
      '/scope': ['text/html', '<!doctype html><style>@scope (.card) { :scope > p { position: fixed } }</style><div class="card"><p>text</p></div>'],
    };
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', origin);
      const refusingSheet = `<!doctype html><link rel="stylesheet" href="http://127.0.0.1:${url.searchParams.get('port')}/style.css"><p>text</p>`;
      const [type, body] = url.pathname === '/sheet-from' ? ['text/html', refusingSheet] : (pages[url.pathname] ?? ['text/plain', '']);
      res.writeHead(body ? 200 : 404, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    });
    origin = await listen(server, '127.0.0.1');
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
  });
  beforeEach(async () => {
    page = await (await browser.createBrowserContext()).newPage();
    await page.evaluateOnNewDocument(installReadinessProbe, PROBE_OPTIONS);
  });
  afterEach(() => page.browserContext().close());
  after(async () => {
    await browser?.close();
    await Promise.all([server, otherOrigin].map((closing) => new Promise<void>((resolve) => closing.close(() => resolve()))));
  });

  it('holds every element that is fixed or sticky, however the page made it so, and not the others', async () => {
    await page.goto(`${origin}/floating`, { waitUntil: 'load' });
    const found = await page.evaluateHandle(mayFloatInPage);
    const { floating, mayFloat, plain } = await page.evaluate((elements) => {
      const floats = (element: Element) => ['fixed', 'sticky'].includes(getComputedStyle(element).position);
      const name = (element: Element) => element.id || element.className || element.tagName;
      return {
        floating: Array.from(document.body.getElementsByTagName('*')).filter(floats).map(name),
        mayFloat: (elements ?? []).map(name),
        plain: (elements ?? []).filter((element) => element.classList.contains('plain')).length,
      };
    }, found);
    expect(floating, 'the page floats an element each way').to.include.members(IDS);
    expect(mayFloat).to.include.members(floating);
    expect(plain).to.equal(0);
  });

  it("is undefined where a style sheet is another origin's, which cannot be read", async () => {
    await page.goto(`${origin}/other-origin-sheet`, { waitUntil: 'load' });
    expect(await page.evaluate(() => document.styleSheets.length)).to.equal(1);
    expect(await page.evaluate(mayFloatInPage)).to.equal(undefined);
  });

  it("reads past another origin's style sheet whose load failed, which applies nothing", async () => {
    const refusing = await resettingPort();
    try {
      await page.goto(`${origin}/sheet-from?port=${refusing.port}`, { waitUntil: 'load' });
      expect(await page.evaluate(() => document.styleSheets.length)).to.equal(1);
      expect(await page.evaluate(mayFloatInPage)).to.deep.equal([]);
    } finally {
      await refusing.close();
    }
  });

  it('is undefined where a rule sets position inside @scope, whose selectors mean something else outside it', async () => {
    await page.goto(`${origin}/scope`, { waitUntil: 'load' });
    expect(await page.evaluate(mayFloatInPage)).to.equal(undefined);
  });
});
