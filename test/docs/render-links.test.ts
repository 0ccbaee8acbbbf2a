import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { chromiumLaunchOptions } from '../../services/renderer/src/pool.ts';
import { seriousAxeViolations } from '../support/axe.ts';
import { near } from '../support/decode-image.ts';
import { closedPort, startFixtureServer, type FixturePages } from '../support/fixture-server.ts';
import { decodedImage, testConfig } from '../support/harness.ts';
import { EMAIL, PASSWORD, startDashboard, type DashboardHarness } from '../services/api/dashboard/support.ts';

/**
 * docs/render-links.md, as a reader follows it: a link built with the CLI, with openssl, with the
 * Node snippet and in the dashboard, each taken from the page itself (the blocks run as written,
 * with the reader's variables in the environment), then shown by a real Chromium in an <img> of a
 * page served on loopback: the image loads, has its size, and shows the captured page's pixels.
 */
const root = path.join(import.meta.dirname, '..', '..');
const doc = readFileSync(path.join(root, 'docs', 'render-links.md'), 'utf8');

/** The fenced block of `language` that contains `marker`. */
function block(language: string, marker: string): string {
  const blocks = [...doc.matchAll(/```(\w*)\n([\s\S]*?)```/g)].filter(([, lang]) => lang === language).map(([, , body]) => body as string);
  const found = blocks.find((body) => body.includes(marker));
  if (!found) throw new Error(`docs/render-links.md has no ${language} block with ${marker}`);
  return found;
}

/** Runs a shell or Node snippet with the reader's variables, and answers its stdout. */
function run(command: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`${command} exited ${code}: ${err}`))));
  });
}

describe('docs/render-links.md: every way to build a link renders in a real browser <img>', function () {
  this.timeout(300_000);
  let fixtures: FixturePages;
  let dashboard: DashboardHarness;
  let browser: Browser;
  let page: Page;
  let env: Record<string, string>;

  before(async () => {
    fixtures = await startFixtureServer();
    // The links the dashboard builds start with PUBLIC_BASE_URL: here, where the test serves it.
    const port = await closedPort();
    dashboard = await startDashboard({ PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    await dashboard.listen(port);
    const site = await dashboard.store.createSite({ accountId: dashboard.account.id, name: 'docs', allowedDomains: ['127.0.0.1'] });
    const issued = await dashboard.store.createKey({ accountId: dashboard.account.id, name: 'links', kind: 'site', siteId: site.id, restrictDomains: true });
    env = {
      VIEWFINDER_URL: dashboard.origin,
      KEY_ID: issued.key.id,
      VIEWFINDER_SIGNING_SECRET: issued.signingSecret,
      PAGE_URL: fixtures.url('/geometry'),
      PATH: `${path.join(root, 'bin')}:${path.dirname(process.execPath)}:${process.env.PATH}`,
    };
    browser = await puppeteer.launch(chromiumLaunchOptions(testConfig().renderer));
    page = await browser.newPage();
    page.setDefaultTimeout(120_000);
  });
  after(async () => {
    await browser?.close();
    await dashboard?.close();
    await fixtures?.close();
  });

  /** A loopback page with the link in an <img>, shown at half size: it loads, and its pixels are the captured page's. */
  async function rendersInImg(link: string): Promise<void> {
    expect(link).to.match(new RegExp(`^${dashboard.origin}/api/render\\?url=.*&signature=[0-9a-f]{64}$`));
    const html = `<!doctype html><html lang="en"><head><title>img</title><style>body{margin:0}img{display:block;width:640px;height:360px}</style></head>
      <body><img id="shot" alt="A render link" src="${link.replaceAll('&', '&amp;').replaceAll('"', '&quot;')}"></body></html>`;
    await page.setViewport({ width: 800, height: 400 });
    await page.goto(fixtures.url(`/echo?html=${encodeURIComponent(html)}`));
    await page.waitForFunction(() => (document.getElementById('shot') as HTMLImageElement).complete);
    const natural = await page.$eval('#shot', (img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight]);
    expect(natural).to.deep.equal([1280, 720]);
    const shot = Buffer.from(await page.screenshot({ type: 'png' }));
    const image = decodedImage(PNG.sync.read(shot), shot);
    expect(near(image.rgb(320, 180), [0, 255, 0]), `centre ${image.rgb(320, 180)}`).to.equal(true);
    expect(near(image.rgb(5, 5), [255, 0, 0]), `top-left ${image.rgb(5, 5)}`).to.equal(true);
    expect(near(image.rgb(634, 354), [0, 0, 255]), `bottom-right ${image.rgb(634, 354)}`).to.equal(true);
    expect(near(image.rgb(700, 100), [255, 255, 255]), 'outside the image').to.equal(true);
  }

  /** The same loopback page, with a link the API refuses: a broken image, and the JSON error behind it. */
  async function brokenInImg(link: string, status: number): Promise<void> {
    const html = `<!doctype html><html lang="en"><head><title>img</title></head><body><img id="shot" alt="A refused link" src="${link.replaceAll('&', '&amp;')}"></body></html>`;
    await page.goto(fixtures.url(`/echo?html=${encodeURIComponent(html)}`));
    await page.waitForFunction(() => (document.getElementById('shot') as HTMLImageElement).complete);
    expect(await page.$eval('#shot', (img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight])).to.deep.equal([0, 0]);
    const response = await fetch(link);
    expect(response.status).to.equal(status);
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    expect((await response.json()).error).to.be.a('string');
  }

  it('with a changed or expired link, an <img> shows a broken image, and the answer is a JSON error', async () => {
    const link = await run(process.execPath, ['--input-type=module', '-e', block('js', 'createHmac')], env);
    await brokenInImg(link.replace('cacheTtl=86400', 'cacheTtl=86401'), 401);
    const expired = await run('bash', ['-euo', 'pipefail', '-c', block('sh', 'openssl dgst').replace('+ 604800', '- 10')], env);
    await brokenInImg(expired, 403);
  });

  it('with the CLI (viewfinder links sign)', async () => {
    const commands = block('sh', 'viewfinder links sign').replace(/^export .*\n/gm, '');
    await rendersInImg(await run('bash', ['-euo', 'pipefail', '-c', commands], env));
  });

  it('with openssl, and the curl that fetches it answers the PNG', async () => {
    const link = await run('bash', ['-euo', 'pipefail', '-c', block('sh', 'openssl dgst')], env);
    await rendersInImg(link);
    const curl = block('sh', 'curl ');
    const fetched = await run('bash', ['-euo', 'pipefail', '-c', `cd "$(mktemp -d)" && link='${link}' && ${curl}`], env);
    expect(fetched).to.equal('200 image/png');
  });

  it('with the Node snippet', async () => {
    await rendersInImg(await run(process.execPath, ['--input-type=module', '-e', block('js', 'createHmac')], env));
  });

  it('in the dashboard, whose link builder passes axe-core and keeps its CSRF check', async () => {
    const context = await browser.createBrowserContext();
    const tab = await context.newPage();
    tab.setDefaultTimeout(120_000);
    try {
      await tab.goto(`${dashboard.origin}/dashboard/sign-in`);
      await tab.type('#field-email', EMAIL);
      await tab.type('#field-password', PASSWORD);
      await Promise.all([tab.waitForNavigation(), tab.keyboard.press('Enter')]);
      await tab.goto(`${dashboard.origin}/dashboard/keys`);
      const audit = async () => expect((await seriousAxeViolations(tab)).map((v) => `${v.impact} ${v.id}: ${v.help}`)).to.deep.equal([]);
      await audit();

      // A URL the API refuses: the message sits next to its field, and no link is shown.
      await tab.type('#field-url', 'ftp://example.com/');
      await Promise.all([tab.waitForNavigation(), tab.click('xpath/.//button[normalize-space()="Sign link"]')]);
      expect(await tab.$eval('#field-url-error', (p) => p.textContent)).to.match(/Invalid URL/);
      expect(await tab.$('#signed-link')).to.equal(null);
      await audit();

      await tab.$eval('#field-url', (input) => ((input as HTMLInputElement).value = ''));
      await tab.type('#field-url', env.PAGE_URL as string);
      await tab.select('#field-expiresIn', '86400');
      await Promise.all([tab.waitForNavigation(), tab.click('xpath/.//button[normalize-space()="Sign link"]')]);
      await audit();
      const link = await tab.$eval('#signed-link', (input) => (input as HTMLInputElement).value);
      expect(link).to.include(`key=${env.KEY_ID}`).and.match(/&cacheTtl=86400&key=.*&expires=\d+&signature=/);
      expect(await tab.content()).to.not.include(env.VIEWFINDER_SIGNING_SECRET);
      await rendersInImg(link);

      // The builder's form is a state-changing POST like any other: without the session's CSRF token it is refused.
      const forged = await tab.evaluate(async () => {
        const response = await fetch('/dashboard/keys/link', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'keyId=x&url=https%3A%2F%2Fexample.com' });
        return response.status;
      });
      expect(forged).to.equal(403);
    } finally {
      await context.close();
    }
  });
});
