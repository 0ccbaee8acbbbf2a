import type { SiteView } from '../../../../../lib/management.ts';
import { BadRequest } from '../../../../../lib/errors.ts';
import { CAPTURE_FORMATS, DEFAULT_IMAGE_FORMAT, DEFAULT_IMAGE_QUALITY, LOSSY_FORMATS, MIME_TYPES, type CaptureFormat } from '../../../../renderer/src/capture/image-formats.ts';
import { DEFAULT_PAPER, PAPER_NAMES, PAPER_SIZES } from '../../../../renderer/src/capture/pdf.ts';
import { PROFILE_NAMES } from '../../../../renderer/src/capture/profiles.ts';
import { MAX_HIDE_SELECTORS } from '../../../../renderer/src/protocol.ts';
import { MAX_CACHE_TTL_SECONDS } from '../../routes/capture-options.ts';
import type { CachePolicy } from '../../result-cache/cached-capture.ts';
import { captureScreenshot, toCaptureRequest, validateScreenshotBody, type ScreenshotResponse } from '../../routes/screenshot.ts';
import type { DashboardDeps, PageContext } from '../deps.ts';
import { checkboxField, csrfField, errorsFor, formError, selectField, textField, type FieldErrors } from '../fields.ts';
import { checkFormText, field } from '../forms.ts';
import { html } from '../html.ts';
import { errorStatus, userMessage } from './common.ts';
import { formatBytes, TRY_IT_KEY_ID } from './usage.ts';

/**
 * Try it: a capture from the browser, under the session's account and one of its sites. No API key
 * is involved, so none can end up in the page: the server captures with the same validation, rate
 * limit and renderer as /api/screenshot, and counts the capture against the site (and, among the
 * keys, as "Try it"). The screenshot arrives in the answer to the POST, which is not redirected:
 * the image is not stored anywhere to show after a redirect.
 */

/**
 * Which field a message is about. The renderer's selector messages name the option inside the
 * sentence ("No element matches selector …", "… no element matching waitForSelector …"), so those
 * patterns come first: a selector that happens to contain "URL" still lands next to its field.
 */
const TRY_FIELDS = {
  // First: a step's message names a step's selector, a click or a URL ("Step 2 of 3 (click "#go") failed: ...").
  steps: /^steps\b|^Step \d+ of \d+/,
  credentials: /^credentials\b/,
  waitForSelector: /\bwaitForSelector\b/,
  hideSelectors: /^hideSelectors\b/,
  fullPage: /^fullPage\b/,
  selector: /^selector\b|\bselector "/,
  click: /\bclick\b/,
  html: /^html\b|\bhtml document\b|an html\b/,
  headers: /^headers\b/,
  cookies: /^cookies\b/,
  username: /^authorization\b/,
  userAgent: /^userAgent\b/,
  locale: /^locale\b/,
  timezone: /^timezone\b/,
  latitude: /^geolocation\b/,
  injectCss: /^injectCss\b/,
  injectJs: /^injectJs\b/,
  blockUrls: /^blockUrls\b/,
  url: /URL|^url\b/,
  quality: /^quality\b/,
  wait: /^wait\b/,
  siteId: /^Site /,
  removeAds: /^removeAds\b/,
  format: /^format\b/,
  imageQuality: /^imageQuality\b/,
  paper: /^pdf\.paper\b|^pdf options\b/,
  landscape: /^pdf\.landscape\b/,
  cacheTtl: /^cacheTtl\b/,
};

interface TryValues {
  siteId: string;
  url: string;
  quality: string;
  wait: string;
  fullPage: boolean;
  removeAds: boolean;
  format: string;
  imageQuality: string;
  /** PDF only, as are landscape's: sent only with format pdf. */
  paper: string;
  landscape: boolean;
  selector: string;
  waitForSelector: string;
  /** One CSS selector per line, as typed. */
  hideSelectors: string;
  darkMode: boolean;
  reducedMotion: boolean;
  cacheTtl: string;
  /** The visit options (docs/capture-options.md); the credentials among them are write-only: never shown again. */
  html: string;
  userAgent: string;
  locale: string;
  timezone: string;
  latitude: string;
  longitude: string;
  click: string;
  injectCss: string;
  injectJs: string;
  blockImages: boolean;
  blockFonts: boolean;
  blockMedia: boolean;
  blockScripts: boolean;
  /** One pattern per line. */
  blockUrls: string;
  /** One "Name: value" per line. */
  headers: string;
  /** One "name=value" per line. */
  cookies: string;
  username: string;
  password: string;
  token: string;
  /** The journey as the JSON list of POST /api/screenshot's steps; shown again with every fill value blanked. */
  steps: string;
  /** One "name=value" per line: what fill steps take with valueFrom. Write-only. */
  credentials: string;
}

/** Fields that hold credentials: they go to the capture, and are never written back into the page. */
const WRITE_ONLY = ['headers', 'cookies', 'password', 'token', 'credentials'] as const satisfies readonly (keyof TryValues)[];

const BLOCK_FIELDS = { blockImages: 'images', blockFonts: 'fonts', blockMedia: 'media', blockScripts: 'scripts' } as const;


const DEFAULTS: TryValues = {
  siteId: '',
  url: '',
  quality: 'standard',
  wait: '',
  fullPage: false,
  removeAds: true,
  format: DEFAULT_IMAGE_FORMAT,
  imageQuality: '',
  paper: DEFAULT_PAPER,
  landscape: false,
  selector: '',
  waitForSelector: '',
  hideSelectors: '',
  darkMode: false,
  reducedMotion: false,
  cacheTtl: '0',
  html: '',
  userAgent: '',
  locale: '',
  timezone: '',
  latitude: '',
  longitude: '',
  click: '',
  injectCss: '',
  injectJs: '',
  blockImages: false,
  blockFonts: false,
  blockMedia: false,
  blockScripts: false,
  blockUrls: '',
  headers: '',
  cookies: '',
  username: '',
  password: '',
  token: '',
  steps: '',
  credentials: '',
};

/** The fields the form has: any other is refused (forms.ts). */
export const TRY_FORM_FIELDS = Object.keys(DEFAULTS);

/** What the result section shows: the answer, and the image type it was encoded in. */
interface TryResult {
  body: ScreenshotResponse;
  mimeType: string;
}

function cacheNote(body: ScreenshotResponse, cacheTtl: string): string {
  if (body.cached === undefined) return 'Rendered now; not cached (cache time 0).';
  return body.cached ? 'Served from the cache, without rendering.' : `Rendered now, and cached for ${cacheTtl} seconds.`;
}

function tryPage(page: PageContext, sites: SiteView[], given: TryValues, errors: FieldErrors = {}, result?: TryResult, status = 200): void {
  const values: TryValues = { ...given, steps: stepsShownAgain(given.steps), ...Object.fromEntries(WRITE_ONLY.map((name) => [name, ''])) };
  if (sites.length === 0) {
    page.send('Try it', html`<p>Captures count against a site. <a href="/dashboard/sites">Create a site</a> first.</p>`);
    return;
  }
  page.send(
    'Try it',
    html`<section class="card" aria-labelledby="try-form">
      <h2 id="try-form">Capture a page</h2>
      <form method="post" action="/dashboard/try" novalidate>
        ${formError(errors)}
        ${csrfField(page.csrfToken)}
        ${selectField({ label: 'Site', name: 'siteId', value: values.siteId, errors, choices: sites.map((site) => ({ value: site.id, label: site.name })), hint: 'The capture counts against this site.' })}
        ${textField({ label: 'URL', name: 'url', type: 'url', value: values.url, hint: 'An http or https address, e.g. https://example.com; or leave it empty and give HTML below.', errors })}
        ${selectField({ label: 'Quality', name: 'quality', value: values.quality, errors, choices: PROFILE_NAMES.map((name) => ({ value: name, label: name })) })}
        ${textField({ label: 'Extra wait (ms)', name: 'wait', type: 'number', value: values.wait, hint: 'Optional: 1000 to 8000 after the page has loaded.', errors })}
        ${checkboxField({ label: 'Full page', name: 'fullPage', checked: values.fullPage, errors })}
        ${checkboxField({ label: 'Remove ads and cookie banners', name: 'removeAds', checked: values.removeAds, errors })}
        <fieldset>
          <legend>Image</legend>
          ${selectField({ label: 'Format', name: 'format', value: values.format, errors, choices: CAPTURE_FORMATS.map((format) => ({ value: format, label: FORMAT_LABELS[format] })), hint: 'PNG is lossless; JPEG and WebP are smaller; PDF prints the page on paper, backgrounds included.' })}
          ${textField({ label: 'Image quality', name: 'imageQuality', type: 'number', value: values.imageQuality, hint: `Optional, JPEG and WebP only: 1 to 100 (${DEFAULT_IMAGE_QUALITY} when empty).`, errors, dependsOn: { name: 'format', values: LOSSY_FORMATS } })}
          ${selectField({ label: 'Paper', name: 'paper', value: values.paper, errors, choices: PAPER_NAMES.map((name) => ({ value: name, label: `${name} (${PAPER_SIZES[name].width} × ${PAPER_SIZES[name].height})` })), hint: 'PDF only.', dependsOn: PDF_ONLY })}
          ${checkboxField({ label: 'Landscape', name: 'landscape', checked: values.landscape, hint: 'PDF only: the paper turned sideways.', errors, dependsOn: PDF_ONLY })}
          ${textField({ label: 'Element selector', name: 'selector', value: values.selector, hint: 'Optional: capture only the first element matching this CSS selector, e.g. #hero. Not with Full page.', errors })}
        </fieldset>
        <fieldset>
          <legend>Page</legend>
          ${textField({ label: 'Wait for selector', name: 'waitForSelector', value: values.waitForSelector, hint: 'Optional: capture once an element matching this CSS selector is visible; 408 if it never is.', errors })}
          ${textField({ label: 'Hide selectors', name: 'hideSelectors', multiline: true, value: values.hideSelectors, hint: `Optional: one CSS selector per line, at most ${MAX_HIDE_SELECTORS}. Matching elements are hidden before the capture.`, errors })}
          ${checkboxField({ label: 'Dark mode', name: 'darkMode', checked: values.darkMode, hint: 'The page sees prefers-color-scheme: dark.', errors })}
          ${checkboxField({ label: 'Reduce motion', name: 'reducedMotion', checked: values.reducedMotion, hint: 'The page sees prefers-reduced-motion: reduce.', errors })}
        </fieldset>
        <fieldset>
          <legend>Document and visitor</legend>
          ${textField({ label: 'HTML instead of the URL', name: 'html', multiline: true, value: values.html, hint: 'Optional: a document rendered at an opaque origin; everything it loads passes the network guard.', errors })}
          ${textField({ label: 'User agent', name: 'userAgent', value: values.userAgent, hint: "Optional: replaces the profile's.", errors })}
          ${textField({ label: 'Locale', name: 'locale', value: values.locale, hint: 'Optional: a language tag such as fr-FR (Accept-Language, navigator.language).', errors })}
          ${textField({ label: 'Time zone', name: 'timezone', value: values.timezone, hint: 'Optional: an IANA name such as Europe/Paris.', errors })}
          ${textField({ label: 'Latitude', name: 'latitude', type: 'number', value: values.latitude, hint: 'Optional, with longitude: the position the page may read.', errors })}
          ${textField({ label: 'Longitude', name: 'longitude', type: 'number', value: values.longitude, errors })}
        </fieldset>
        <fieldset>
          <legend>Before the capture</legend>
          ${textField({ label: 'Click', name: 'click', value: values.click, hint: 'Optional: a CSS selector whose element is clicked once visible.', errors })}
          ${textField({ label: 'CSS to inject', name: 'injectCss', multiline: true, value: values.injectCss, errors })}
          ${textField({ label: 'Script to run', name: 'injectJs', multiline: true, value: values.injectJs, hint: 'Runs once the page has loaded; await works.', errors })}
          ${checkboxField({ label: 'Block images', name: 'blockImages', checked: values.blockImages, errors })}
          ${checkboxField({ label: 'Block fonts', name: 'blockFonts', checked: values.blockFonts, errors })}
          ${checkboxField({ label: 'Block audio and video', name: 'blockMedia', checked: values.blockMedia, errors })}
          ${checkboxField({ label: 'Block scripts', name: 'blockScripts', checked: values.blockScripts, errors })}
          ${textField({ label: 'Block URLs', name: 'blockUrls', multiline: true, value: values.blockUrls, hint: 'Optional: one pattern per line; * matches anything.', errors })}
        </fieldset>
        <fieldset>
          <legend>Behind a login</legend>
          <p class="hint">Sent to the URL's own origin only, and never shown again on this page.</p>
          ${textField({ label: 'Headers', name: 'headers', multiline: true, value: values.headers, hint: 'One "Name: value" per line.', errors })}
          ${textField({ label: 'Cookies', name: 'cookies', multiline: true, value: values.cookies, hint: 'One "name=value" per line.', errors })}
          ${textField({ label: 'Basic auth user name', name: 'username', value: values.username, autocomplete: 'off', errors })}
          ${textField({ label: 'Basic auth password', name: 'password', type: 'password', value: '', autocomplete: 'new-password', errors })}
          ${textField({ label: 'Bearer token', name: 'token', type: 'password', value: '', autocomplete: 'off', hint: 'Instead of a user name and password.', errors })}
        </fieldset>
        <fieldset>
          <legend>Journey</legend>
          ${textField({ label: 'Steps', name: 'steps', multiline: true, value: values.steps, hint: 'Optional: a JSON list of steps, e.g. [{"action": "fill", "selector": "#user", "value": "ada"}, {"action": "press", "key": "Enter"}] (see the docs, "steps"). Fill values are not shown again.', errors })}
          ${textField({ label: 'Credentials', name: 'credentials', multiline: true, value: '', hint: 'Optional: one "name=value" per line, for fill steps\' "valueFrom". Never shown again.', errors })}
        </fieldset>
        <fieldset>
          <legend>Cache</legend>
          ${textField({ label: 'Cache time (seconds)', name: 'cacheTtl', type: 'number', value: values.cacheTtl, hint: `0 renders every time. Above 0, the same capture within that many seconds comes from the cache (at most ${MAX_CACHE_TTL_SECONDS}, 30 days).`, errors })}
        </fieldset>
        <button type="submit" class="primary">Capture</button>
      </form>
    </section>
    ${result && (result.mimeType === MIME_TYPES.pdf ? pdfResult(result, values) : imageResult(result, values))}`,
    status,
  );
}

function imageResult(result: TryResult, values: TryValues) {
  return html`<section aria-labelledby="result">
      <h2 id="result">Screenshot</h2>
      <p id="result-facts">${result.body.width}×${result.body.height} px, ${result.mimeType}, ${formatBytes(result.body.fileSize)}, in ${result.body.processingTimeMs} ms${result.body.truncated ? ' (cut at the maximum height)' : ''}.</p>
      <p id="result-cache">${cacheNote(result.body, values.cacheTtl)}</p>
      <img class="screenshot" src="${result.body.image}" alt="Screenshot of ${result.body.url}" width="${result.body.width}" height="${result.body.height}">
    </section>`;
}

/** A PDF is offered as a download: the page's CSP shows no embedded documents, and browsers differ in how they would. */
function pdfResult(result: TryResult, values: TryValues) {
  return html`<section aria-labelledby="result">
      <h2 id="result">PDF</h2>
      <p id="result-facts">First page ${result.body.width}×${result.body.height} CSS px, ${result.mimeType}, ${formatBytes(result.body.fileSize)}, in ${result.body.processingTimeMs} ms.</p>
      <p id="result-cache">${cacheNote(result.body, values.cacheTtl)}</p>
      <p><a id="result-pdf" href="${result.body.image}" download="viewfinder-capture.pdf">Download the PDF of ${result.body.url}</a></p>
    </section>`;
}

const FORMAT_LABELS: Record<CaptureFormat, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP', pdf: 'PDF' };
const PDF_ONLY = { name: 'format', values: ['pdf'] } as const;

/** A number field's value for the API: absent when empty, so that the API's default applies. */
function numberIn(value: string): number | undefined {
  return value === '' ? undefined : Number(value);
}

/** A text field's value for the API: absent when empty. */
function textIn(value: string): string | undefined {
  return value === '' ? undefined : value;
}

/** The form as the body of POST /api/screenshot, so that it is validated by the same schema, with the same messages. */
function screenshotBodyOf(values: TryValues): Record<string, unknown> {
  const hideSelectors = values.hideSelectors
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const body: Record<string, unknown> = {
    url: textIn(values.url),
    quality: values.quality,
    wait: numberIn(values.wait),
    fullPage: values.fullPage,
    removeAds: values.removeAds,
    format: values.format,
    // Sent only for a PDF: without the script the paper select is sent with every format.
    pdf: values.format === 'pdf' ? { paper: values.paper, ...(values.landscape ? { landscape: true } : {}) } : undefined,
    imageQuality: numberIn(values.imageQuality),
    selector: textIn(values.selector),
    waitForSelector: textIn(values.waitForSelector),
    hideSelectors: hideSelectors.length > 0 ? hideSelectors : undefined,
    darkMode: values.darkMode,
    reducedMotion: values.reducedMotion,
    cacheTtl: numberIn(values.cacheTtl),
    ...visitBodyOf(values),
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

/** The steps text as JSON, or the 400 that says it is not; absent when empty. */
function stepsIn(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequest('steps must be a JSON list of steps, e.g. [{"action": "click", "selector": "#more"}]');
  }
}

/** The steps as typed, but with every fill's inline value blanked: a value typed into a page may be a password. */
function stepsShownAgain(text: string): string {
  let steps: unknown;
  try {
    steps = JSON.parse(text);
  } catch {
    // Not JSON: nothing can be told apart in it, so nothing of it is shown again.
    return '';
  }
  if (!Array.isArray(steps)) return '';
  const blanked = steps.map((step: unknown) =>
    typeof step === 'object' && step !== null && (step as { action?: unknown }).action === 'fill' && 'value' in step ? { ...step, value: '' } : step,
  );
  return JSON.stringify(blanked, null, 1);
}

/** Lines of a text area, trimmed, without the empty ones. */
function linesOf(value: string): string[] {
  return value
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** "left<sep>right" into its two parts (trimmed); a line without the separator is all left, which the schema then refuses. */
function pairOf(line: string, separator: string): [string, string] {
  const at = line.indexOf(separator);
  return at < 0 ? [line, ''] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
}

/** The visit options of the form, in the body's shape; each absent when its fields are empty. */
function visitBodyOf(values: TryValues): Record<string, unknown> {
  const headers = linesOf(values.headers).map((line) => pairOf(line, ':'));
  const cookies = linesOf(values.cookies).map((line) => pairOf(line, '='));
  const blockResources = Object.entries(BLOCK_FIELDS).flatMap(([field, kind]) => (values[field as keyof typeof BLOCK_FIELDS] ? [kind] : []));
  const blockUrls = linesOf(values.blockUrls);
  const authorization =
    values.token !== ''
      ? { type: 'bearer', token: values.token }
      : values.username !== '' || values.password !== ''
        ? { type: 'basic', username: values.username, password: values.password }
        : undefined;
  const credentials = linesOf(values.credentials).map((line) => pairOf(line, '='));
  return {
    steps: stepsIn(values.steps),
    credentials: credentials.length > 0 ? Object.fromEntries(credentials) : undefined,
    url: values.html.trim() !== '' && values.url === '' ? undefined : textIn(values.url),
    html: textIn(values.html.trim()),
    userAgent: textIn(values.userAgent),
    locale: textIn(values.locale),
    timezone: textIn(values.timezone),
    geolocation: values.latitude !== '' || values.longitude !== '' ? { latitude: numberIn(values.latitude), longitude: numberIn(values.longitude) } : undefined,
    click: textIn(values.click),
    injectCss: textIn(values.injectCss.trim()),
    injectJs: textIn(values.injectJs.trim()),
    blockResources: blockResources.length > 0 ? blockResources : undefined,
    blockUrls: blockUrls.length > 0 ? blockUrls : undefined,
    headers: headers.length > 0 ? Object.fromEntries(headers) : undefined,
    cookies: cookies.length > 0 ? cookies.map(([name, value]) => ({ name, value })) : undefined,
    authorization,
  };
}

export async function showTry(page: PageContext): Promise<void> {
  const sites = await page.ops.listSites();
  tryPage(page, sites, { ...DEFAULTS, siteId: sites[0]?.id ?? '' });
}

export function captureTry(deps: DashboardDeps) {
  return async (page: PageContext): Promise<void> => {
    const started = performance.now();
    const sites = await page.ops.listSites();
    const { ctx } = page;
    const text = (name: keyof TryValues) => field(ctx, name).trim();
    const checked = (name: keyof TryValues) => field(ctx, name) === 'on';
    const values: TryValues = {
      siteId: field(ctx, 'siteId'),
      url: text('url'),
      quality: field(ctx, 'quality'),
      wait: text('wait'),
      fullPage: checked('fullPage'),
      removeAds: checked('removeAds'),
      format: field(ctx, 'format') || DEFAULT_IMAGE_FORMAT,
      imageQuality: text('imageQuality'),
      paper: field(ctx, 'paper') || DEFAULT_PAPER,
      landscape: checked('landscape'),
      selector: text('selector'),
      waitForSelector: text('waitForSelector'),
      hideSelectors: field(ctx, 'hideSelectors'),
      darkMode: checked('darkMode'),
      reducedMotion: checked('reducedMotion'),
      cacheTtl: text('cacheTtl'),
      html: field(ctx, 'html'),
      userAgent: text('userAgent'),
      locale: text('locale'),
      timezone: text('timezone'),
      latitude: text('latitude'),
      longitude: text('longitude'),
      click: text('click'),
      injectCss: field(ctx, 'injectCss'),
      injectJs: field(ctx, 'injectJs'),
      blockImages: checked('blockImages'),
      blockFonts: checked('blockFonts'),
      blockMedia: checked('blockMedia'),
      blockScripts: checked('blockScripts'),
      blockUrls: field(ctx, 'blockUrls'),
      headers: field(ctx, 'headers'),
      cookies: field(ctx, 'cookies'),
      username: text('username'),
      password: field(ctx, 'password'),
      token: text('token'),
      steps: field(ctx, 'steps'),
      credentials: field(ctx, 'credentials'),
    };
    const account = page.signedIn.account;
    let result: TryResult;
    let siteId: string;
    try {
      checkFormText(ctx);
      const body = validateScreenshotBody(screenshotBodyOf(values));
      siteId = (await page.ops.getSite(values.siteId)).id;
      await deps.limiter.consume(ctx, `dashboard:${account.id}`, account.rateLimitPerMinute);
      const usage = { accountId: account.id, siteId, keyId: TRY_IT_KEY_ID };
      try {
        // The cache scope of /api/screenshot for this site: Try it shares entries with its unrestricted keys' captures.
        const policy: CachePolicy = { cache: deps.resultCache, ttlSeconds: body.cacheTtl ?? 0, scope: { mode: 'hosted', siteId }, logger: deps.logger };
        const answer = await captureScreenshot(ctx, deps.renderer, toCaptureRequest(body), started, policy);
        result = { body: answer.body, mimeType: MIME_TYPES[answer.format] };
      } catch (err) {
        await deps.store.recordUsage({ ...usage, outcome: 'failure', bytes: 0 }).catch((usageErr: unknown) => deps.logger.error({ err: usageErr }, 'Failed to record usage'));
        throw err;
      }
      await deps.store.recordUsage({ ...usage, outcome: 'capture', bytes: result.body.fileSize });
    } catch (err) {
      tryPage(page, sites, values, errorsFor(userMessage(err), TRY_FIELDS), undefined, errorStatus(err));
      return;
    }
    tryPage(page, sites, values, {}, result);
  };
}
