/**
 * Who visits the page and what they do there (visit-options.ts): set up before navigation (user
 * agent, locale, time zone, position, cookies, injected CSS) and done once the page has loaded
 * (injected script, click). Each step runs only when its option was given, so a capture without
 * them makes no extra DevTools call.
 */
import type { Page } from 'puppeteer-core';
import { BadRequest } from '../../../../lib/errors.ts';
import type { CaptureRequest } from '../renderer.ts';
import { waitForVisible } from './page-options.ts';

/** Where the page goes: the URL, or the html as a data: URL, whose document has an opaque origin. */
export function navigationTarget(request: CaptureRequest): string {
  return request.html === undefined ? request.url : `data:text/html;charset=utf-8;base64,${Buffer.from(request.html, 'utf8').toString('base64')}`;
}

/** Runs in every document of the page from its start: the client's CSS, in the top document only. */
function installInjectedStyle(css: string): void {
  if (window !== window.top) return;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}

/** Before navigation, after the profile's emulation (whose user agent `userAgent` replaces). */
export async function prepareVisit(page: Page, request: CaptureRequest): Promise<void> {
  const steps: Promise<unknown>[] = [];
  if (request.userAgent !== undefined) steps.push(page.setUserAgent({ userAgent: request.userAgent }));
  if (request.locale !== undefined) steps.push(page.emulateLocale(request.locale), page.setExtraHTTPHeaders({ 'Accept-Language': request.locale }));
  if (request.timezone !== undefined) steps.push(emulateTimezone(page, request.timezone));
  if (request.geolocation) {
    const { latitude, longitude, accuracy = 0 } = request.geolocation;
    // The context is this capture's alone, so every origin of it may have the position.
    steps.push(page.browserContext().setPermission('*', { permission: { name: 'geolocation' }, state: 'granted' }), page.setGeolocation({ latitude, longitude, accuracy }));
  }
  if (request.cookies && request.html === undefined) {
    // Host-only (no domain): the browser sends them to the URL's host alone, and over https only when it is https.
    const secure = URL.parse(request.url)?.protocol === 'https:';
    steps.push(page.setCookie(...request.cookies.map(({ name, value }) => ({ name, value, url: request.url, secure }))));
  }
  if (request.injectCss !== undefined) steps.push(page.evaluateOnNewDocument(installInjectedStyle, request.injectCss));
  await Promise.all(steps);
}

async function emulateTimezone(page: Page, timezone: string): Promise<void> {
  try {
    await page.emulateTimezone(timezone);
  } catch (err) {
    // The API checks the name with Node's ICU; Chromium's may know fewer.
    if (/Invalid timezone/i.test(String((err as Error)?.message))) throw new BadRequest(`timezone ${JSON.stringify(timezone)} is not a time zone Chromium knows`);
    throw err;
  }
}

/**
 * Once the page has loaded (DOMContentLoaded): the injected script, awaited, then the click on an
 * element that must become visible before `deadline`. A script that never ends is ended by the
 * capture's deadline, which closes the page.
 */
export async function actOnPage(page: Page, request: CaptureRequest, deadline: number, signal?: AbortSignal): Promise<void> {
  if (request.injectJs !== undefined) await runInjectedScript(page, request.injectJs);
  if (request.click !== undefined) {
    await waitForVisible(page, request.click, deadline, signal, 'click');
    await page.click(request.click);
  }
}

async function runInjectedScript(page: Page, script: string): Promise<void> {
  try {
    // The body of an async function, so that `await` works and a returned promise is waited for.
    await page.evaluate(`(async () => {\n${script}\n})()`);
  } catch (err) {
    const message = String((err as Error)?.message ?? err);
    // The script navigated the page: the capture goes on with the page it went to.
    if (/Execution context was destroyed/i.test(message)) return;
    // The page closed under the script (the deadline, or the client gone): not the script's fault.
    if (/Target closed|Session closed|detached/i.test(message)) throw err;
    throw new BadRequest(`injectJs failed: ${message.split('\n')[0]}`.slice(0, 500));
  }
}
