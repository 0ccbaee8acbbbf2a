import type { SiteView } from '../../../../../lib/management.ts';
import { PROFILE_NAMES } from '../../../../renderer/src/capture/profiles.ts';
import { captureScreenshot, toCaptureRequest, validateScreenshotBody, type ScreenshotResponse } from '../../routes/screenshot.ts';
import type { DashboardDeps, PageContext } from '../deps.ts';
import { checkboxField, csrfField, errorsFor, formError, selectField, textField, type FieldErrors } from '../fields.ts';
import { field } from '../forms.ts';
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
const TRY_FIELDS = { url: /URL/, quality: /^quality\b/, wait: /^wait\b/, siteId: /^Site /, fullPage: /^fullPage\b/, removeAds: /^removeAds\b/ };

interface TryValues {
  siteId: string;
  url: string;
  quality: string;
  wait: string;
  fullPage: boolean;
  removeAds: boolean;
}

const DEFAULTS: TryValues = { siteId: '', url: '', quality: 'standard', wait: '', fullPage: false, removeAds: true };

function tryPage(page: PageContext, sites: SiteView[], values: TryValues, errors: FieldErrors = {}, result?: ScreenshotResponse, status = 200): void {
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
        ${textField({ label: 'URL', name: 'url', type: 'url', value: values.url, required: true, hint: 'An http or https address, e.g. https://example.com', errors })}
        ${selectField({ label: 'Quality', name: 'quality', value: values.quality, errors, choices: PROFILE_NAMES.map((name) => ({ value: name, label: name })) })}
        ${textField({ label: 'Extra wait (ms)', name: 'wait', type: 'number', value: values.wait, hint: 'Optional: 1000 to 8000 after the page has loaded.', errors })}
        ${checkboxField({ label: 'Full page', name: 'fullPage', checked: values.fullPage, errors })}
        ${checkboxField({ label: 'Remove ads and cookie banners', name: 'removeAds', checked: values.removeAds, errors })}
        <button type="submit" class="primary">Capture</button>
      </form>
    </section>
    ${result &&
    html`<section aria-labelledby="result">
      <h2 id="result">Screenshot</h2>
      <p>${result.width}×${result.height} px, ${formatBytes(result.fileSize)}, in ${result.processingTimeMs} ms${result.truncated ? ' (cut at the full-page maximum)' : ''}.</p>
      <img class="screenshot" src="${result.image}" alt="Screenshot of ${result.url}" width="${result.width}" height="${result.height}">
    </section>`}`,
    status,
  );
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
    const values: TryValues = {
      siteId: field(ctx, 'siteId'),
      url: field(ctx, 'url').trim(),
      quality: field(ctx, 'quality'),
      wait: field(ctx, 'wait').trim(),
      fullPage: field(ctx, 'fullPage') === 'on',
      removeAds: field(ctx, 'removeAds') === 'on',
    };
    const account = page.signedIn.account;
    let result: ScreenshotResponse;
    let siteId: string;
    try {
      const body = validateScreenshotBody({
        url: values.url || undefined,
        quality: values.quality,
        ...(values.wait ? { wait: Number(values.wait) } : {}),
        fullPage: values.fullPage,
        removeAds: values.removeAds,
      });
      siteId = (await page.ops.getSite(values.siteId)).id;
      await deps.limiter.consume(ctx, `dashboard:${account.id}`, account.rateLimitPerMinute);
      const usage = { accountId: account.id, siteId, keyId: TRY_IT_KEY_ID };
      try {
        result = (await captureScreenshot(ctx, deps.renderer, toCaptureRequest(body), started)).body;
      } catch (err) {
        await deps.store.recordUsage({ ...usage, outcome: 'failure', bytes: 0 }).catch((usageErr: unknown) => deps.logger.error({ err: usageErr }, 'Failed to record usage'));
        throw err;
      }
      await deps.store.recordUsage({ ...usage, outcome: 'capture', bytes: result.fileSize });
    } catch (err) {
      tryPage(page, sites, values, errorsFor(userMessage(err), TRY_FIELDS), undefined, errorStatus(err));
      return;
    }
    tryPage(page, sites, values, {}, result);
  };
}
