import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { mayFloatInPage } from '../../../services/renderer/src/capture/remove-ads/floating-elements.ts';
import { sweepOverlays } from '../../../services/renderer/src/capture/remove-ads/overlay-sweep.ts';
import { PROBE_OPTIONS } from '../../../services/renderer/src/capture/prepare-page.ts';
import { installReadinessProbe } from '../../../services/renderer/src/capture/readiness-probe.ts';
import { PROFILES } from '../../../services/renderer/src/capture/profiles.ts';
import { chromiumLaunchOptions } from '../../../services/renderer/src/pool.ts';
import { testConfig } from '../../support/harness.ts';

/**
 * The generic pass on its own, on pages set up to sit on each side of its rules (1280x720 viewport):
 * looking at every element, and (with the readiness probe in the page, as in a capture) at the
 * elements the style sheets say may float (floating-elements.ts), which must come to the same.
 */
for (const looksAt of ['every element', 'the elements that may float'] as const) describe(`removeAds generic pass: overlays and scroll locks (looking at ${looksAt})`, function () {
  this.timeout(30_000);
  let browser: Browser;
  let page: Page;

  before(async () => {
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
    page = await browser.newPage();
    await page.setViewport(PROFILES.standard.viewport);
    if (looksAt === 'the elements that may float') {
      await page.evaluateOnNewDocument(installReadinessProbe, PROBE_OPTIONS);
      await page.goto('about:blank');
    }
  });
  after(() => browser?.close());

  it(`looks at ${looksAt}`, async () => {
    await page.setContent('<p>text</p>');
    expect(await page.evaluate(mayFloatInPage)).to.satisfy((mayFloat: unknown) => (looksAt === 'every element' ? mayFloat === undefined : Array.isArray(mayFloat)));
  });

  async function sweep(body: string, style = ''): Promise<{ removed: number; unlocked: boolean; left: string[] }> {
    await page.setContent(`<!doctype html><html><head><style>body{margin:0;height:2000px}${style}</style></head><body>${body}</body></html>`);
    const result = await sweepOverlays(page);
    const left = await page.evaluate(() => Array.from(document.querySelectorAll('[id]'), (element) => element.id));
    return { ...result, left };
  }

  const fixed = (id: string, css: string, inner = '', attributes = '') => `<div id="${id}" ${attributes} style="position:fixed;${css}">${inner}</div>`;

  it('removes a full-screen backdrop and the modal floating above it', async () => {
    const result = await sweep(
      fixed('backdrop', 'inset:0;background:rgba(0,0,0,.5);z-index:1040') + fixed('modal', 'left:340px;top:160px;width:600px;height:400px;background:#fff;z-index:1050'),
    );
    expect(result.left).to.not.include('backdrop');
    expect(result.left).to.not.include('modal');
    expect(result.removed).to.equal(2);
  });

  it('lifts overflow:hidden from html and body', async () => {
    const result = await sweep('<p>text</p>', 'html,body{overflow:hidden}');
    expect(result.unlocked).to.equal(true);
    const overflows = await page.evaluate(() => [getComputedStyle(document.documentElement).overflowY, getComputedStyle(document.body).overflowY]);
    expect(overflows).to.not.include('hidden');
  });

  it('keeps a sticky header of normal height, even at a high z-index', async () => {
    const result = await sweep('<header id="header" style="position:sticky;top:0;height:64px;z-index:9999;background:#123"></header><p id="text">text</p>');
    expect(result.left).to.include('header');
    expect(result.removed).to.equal(0);
  });

  it('keeps a small fixed bar that does not say it is a dialog (chat buttons, bottom bars)', async () => {
    const result = await sweep(fixed('bar', 'left:0;right:0;bottom:0;height:100px;z-index:9999;background:#000'));
    expect(result.left).to.include('bar');
  });

  it('removes a small fixed bar that is a dialog', async () => {
    const result = await sweep(fixed('bar', 'left:0;right:0;bottom:0;height:100px;z-index:9999;background:#000', '', 'role="dialog"'));
    expect(result.left).to.not.include('bar');
  });

  it('removes a modal <dialog> opened with showModal()', async () => {
    await sweep('<dialog id="dialog">Sign up!</dialog>');
    await page.evaluate(() => (document.getElementById('dialog') as HTMLDialogElement).showModal());
    expect((await sweepOverlays(page)).removed).to.equal(1);
    expect(await page.$('#dialog')).to.equal(null);
  });

  it('keeps a large fixed element at a low z-index (a background, a hero)', async () => {
    const result = await sweep(fixed('hero', 'inset:0;z-index:1;background:#def'));
    expect(result.left).to.include('hero');
  });

  it('keeps a large fixed panel that holds the navigation', async () => {
    const result = await sweep(fixed('menu', 'left:0;top:0;bottom:0;width:500px;z-index:100;background:#fff', '<nav id="links">links</nav>'));
    expect(result.left).to.include.members(['menu', 'links']);
  });

  it('keeps an app shell that holds <main>, but removes a modal inside it', async () => {
    const promo = fixed('promo', 'left:200px;top:100px;width:800px;height:400px;z-index:50', 'Install our app', 'aria-modal="true"');
    const result = await sweep(fixed('app', 'inset:0;overflow:auto;z-index:20;background:#fff', `<main id="main">content</main>${promo}`));
    expect(result.left).to.include.members(['app', 'main']);
    expect(result.left).to.not.include('promo');
  });

  it('keeps a full-screen fixed element that holds most of a long page\'s text', async () => {
    const text = 'Lorem ipsum dolor sit amet. '.repeat(40);
    const result = await sweep(fixed('reader', 'inset:0;overflow:auto;z-index:30;background:#fff', `<p>${text}</p>`));
    expect(result.left).to.include('reader');
  });
});
