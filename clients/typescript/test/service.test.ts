/**
 * Every operation against the real service (test/clients/serve-for-clients.ts): hosted and
 * self-hosted captures, asynchronous captures and their webhook, render links, the management
 * API, typed errors, retries on the busy service's 429, timeouts and cancellation.
 */
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { before, describe, test } from 'node:test';
import {
  APITimeoutError,
  AuthenticationError,
  CaptureWaitTimeoutError,
  constructWebhookEvent,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  signRenderLink,
  Viewfinder,
  ViewfinderError,
  WEBHOOK_EVENT_FIELDS,
  WebhookSignatureError,
  type RetryInfo,
  type Site,
} from '../src/index.ts';
import { deliveries, eventually, service, type Service } from './service.ts';

const PNG = [0x89, 0x50, 0x4e, 0x47];
const isPng = (bytes: Uint8Array) => PNG.every((byte, i) => bytes[i] === byte);
const dataUriIsPng = (image: string | undefined) => image !== undefined && image.startsWith('data:image/png;base64,') && isPng(Buffer.from(image.slice(22), 'base64'));

/** Every way an error can be shown: none may hold a credential. */
function assertNoSecret(err: unknown, ...secrets: string[]): void {
  const shown = [String(err), (err as Error).stack ?? '', inspect(err, { depth: Infinity, showHidden: true }), JSON.stringify(err) ?? ''].join('\n');
  for (const secret of secrets) assert.ok(!shown.includes(secret), `a credential shows in ${shown}`);
}

let svc: Service;
let hosted: Viewfinder;
let site: Site;

// In one suite: with --test-isolation=none a top-level hook would be every file's.
describe('against the real service', () => {
  before(async () => {
    svc = await service();
    hosted = new Viewfinder({ baseUrl: svc.hosted.base, apiKey: svc.hosted.key });
    site = await hosted.sites.create({ name: 'client tests', allowedDomains: ['127.0.0.1'] });
    hosted = new Viewfinder({ baseUrl: svc.hosted.base, apiKey: svc.hosted.key, siteId: site.id });
  });

  describe('synchronous captures', () => {
    test('self-hosted: the JSON answer and the bytes', async () => {
      const client = new Viewfinder({ baseUrl: svc.selfHosted.base, apiKey: svc.selfHosted.apiKey, mode: 'self-hosted' });
      const result = await client.screenshots.create({ url: svc.pages.page, quality: 'standard' });
      assert.equal(result.success, true);
      assert.equal(result.width, 1280);
      assert.equal(result.height, 720);
      assert.ok(dataUriIsPng(result.image));
      const image = await client.screenshots.createImage({ url: svc.pages.page, format: 'jpeg', imageQuality: 70 });
      assert.equal(image.contentType, 'image/jpeg');
      assert.deepEqual([...image.bytes.subarray(0, 2)], [0xff, 0xd8]);
      assert.equal(image.width, 1280);
      assert.equal(image.fileSize, image.bytes.length);
    });

    test('hosted, a full-access key with the client siteId: JSON and bytes', async () => {
      const result = await hosted.screenshots.create({ url: svc.pages.page });
      assert.equal(result.site_id, site.id);
      assert.ok(dataUriIsPng(result.image));
      const image = await hosted.screenshots.createImage({ url: svc.pages.page, cacheTtl: 60 });
      assert.ok(isPng(image.bytes));
      assert.equal(image.contentType, 'image/png');
      assert.equal(image.siteId, site.id);
      assert.equal(image.cache, 'miss');
    });

    test('hosted, a site key made through the management API', async () => {
      const key = await hosted.keys.create({ name: 'site key', siteId: site.id, restrictDomains: true });
      const scoped = new Viewfinder({ baseUrl: svc.hosted.base, apiKey: key.key });
      const result = await scoped.screenshots.create({ url: svc.pages.page });
      assert.equal(result.site_id, site.id);
      // A site key may not use the management API.
      const refused = await scoped.sites.list().catch((err: unknown) => err);
      assert.ok(refused instanceof PermissionDeniedError);
      assert.equal(refused.status, 403);
      assertNoSecret(refused, key.key, key.signingSecret);
      await hosted.keys.delete(key.id);
    });
  });

  describe('asynchronous captures', () => {
    test('submit with a webhook, wait with a bound, the image; the delivery verified, a tampered one refused', async () => {
      await fetch(svc.pages.hooks, { method: 'DELETE' });
      const accepted = await hosted.captures.submit({ url: svc.pages.page, webhookUrl: svc.pages.hook });
      assert.match(accepted.id, /^job_/);
      assert.ok(['queued', 'running', 'succeeded'].includes(accepted.status));
      const status = await hosted.captures.wait(accepted.id, { timeout: 90_000, pollInterval: 200 });
      assert.equal(status.status, 'succeeded');
      assert.ok(status.result && dataUriIsPng(status.result.image));
      assert.ok(isPng(await hosted.captures.image(accepted.id)));

      const delivery = await eventually(async () => (await deliveries(svc)).find((d) => d.body.includes(accepted.id)), 60_000, 'the webhook');
      const header = delivery.headers['viewfinder-signature'];
      const event = constructWebhookEvent(delivery.body, header, svc.hosted.signingSecret);
      assert.equal(event.id, accepted.id);
      assert.equal(event.event, 'capture.succeeded');
      assert.equal(event.metadata?.site_id, site.id);
      // The event type names every field a delivery carries, and no other.
      assert.deepEqual(Object.keys(JSON.parse(delivery.body)).sort(), [...WEBHOOK_EVENT_FIELDS].sort());
      // Also through the client, and from the raw bytes.
      assert.equal(hosted.webhooks.constructEvent(Buffer.from(delivery.body), header, svc.hosted.signingSecret).id, accepted.id);

      const tampered = delivery.body.replace('"succeeded"', '"failed"');
      assert.throws(() => constructWebhookEvent(tampered, header, svc.hosted.signingSecret), WebhookSignatureError);
      assert.throws(() => constructWebhookEvent(delivery.body, header, 'another secret'), WebhookSignatureError);
      assert.throws(() => constructWebhookEvent(delivery.body, header, svc.hosted.signingSecret, { now: new Date(Date.now() + 301_000) }), /more than 300 s/);
      assert.equal(hosted.webhooks.verify(delivery.body, undefined, svc.hosted.signingSecret), false);
    });

    test('a batch, polled, and a wait whose bound runs out', async () => {
      const batch = await hosted.captures.submitBatch([{ url: svc.pages.page }, { url: svc.pages.page, quality: 'mobile' }]);
      assert.equal(batch.length, 2);
      // Poll by hand.
      const finished = await Promise.all(
        batch.map((capture) => eventually(async () => {
          const status = await hosted.captures.get(capture.id);
          return status.status === 'succeeded' || status.status === 'failed' ? status : undefined;
        }, 90_000, `capture ${capture.id}`)),
      );
      assert.deepEqual(finished.map((s) => s.status), ['succeeded', 'succeeded']);
      assert.equal(finished[1]?.result?.width, 750);

      const slow = await hosted.captures.submit({ url: `${svc.pages.slow}?ms=4000` });
      const err = await hosted.captures.wait(slow.id, { timeout: 300, pollInterval: 100 }).catch((e: unknown) => e);
      assert.ok(err instanceof CaptureWaitTimeoutError);
      assert.ok(['queued', 'running'].includes((err.lastStatus as { status: string }).status));
    });

    test('an idempotency key answers the same capture', async () => {
      const key = `client-test-${Date.now()}`;
      const first = await hosted.captures.submit({ url: svc.pages.page, idempotencyKey: key });
      const again = await hosted.captures.submit({ url: svc.pages.page, idempotencyKey: key });
      assert.equal(again.id, first.id);
    });

    test('self-hosted: submit and wait', async () => {
      const client = new Viewfinder({ baseUrl: svc.selfHosted.base, apiKey: svc.selfHosted.apiKey, mode: 'self-hosted' });
      const accepted = await client.captures.submit({ url: svc.pages.page });
      const status = await client.captures.wait(accepted.id, { timeout: 90_000, pollInterval: 200 });
      assert.equal(status.status, 'succeeded');
      assert.ok(isPng(await client.captures.image(accepted.id)));
    });
  });

  describe('render links', () => {
    test('signed by the library, fetched from the hosted service: an image', async () => {
      const link = signRenderLink({
        origin: svc.hosted.base,
        keyId: svc.hosted.keyId,
        signingSecret: svc.hosted.signingSecret,
        options: { url: svc.pages.page, site_id: site.id, hideSelectors: ['.ad', '#banner'], removeAds: false },
        expiresIn: 600,
      });
      const response = await fetch(link);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/png');
      assert.ok(isPng(new Uint8Array(await response.arrayBuffer())));

      const viaClient = hosted.renderLinks.sign({ options: { url: svc.pages.page, site_id: site.id, quality: 'mobile' }, keyId: svc.hosted.keyId, signingSecret: svc.hosted.signingSecret });
      const mobile = await fetch(viaClient);
      assert.equal(mobile.status, 200);
      assert.equal(mobile.headers.get('viewfinder-width'), '750');

      const expired = signRenderLink({ origin: svc.hosted.base, keyId: svc.hosted.keyId, signingSecret: svc.hosted.signingSecret, options: { url: svc.pages.page, site_id: site.id }, expires: 1_000_000_000 });
      assert.equal((await fetch(expired)).status, 403);
      const forged = signRenderLink({ origin: svc.hosted.base, keyId: svc.hosted.keyId, signingSecret: 'not the secret', options: { url: svc.pages.page, site_id: site.id } });
      assert.equal((await fetch(forged)).status, 401);
      assert.throws(() => signRenderLink({ origin: svc.hosted.base, keyId: 'k', signingSecret: 's', options: { url: svc.pages.page, headers: { a: 'b' } } as never }), TypeError);
    });
  });

  describe('management', () => {
    test('sites: create, list, get, update, delete', async () => {
      const created = await hosted.sites.create({ name: 'shop', allowedDomains: ['example.com', '*.example.org'] });
      assert.deepEqual(created.allowedDomains, ['example.com', 'example.org']);
      assert.ok((await hosted.sites.list()).some((s) => s.id === created.id));
      assert.equal((await hosted.sites.get(created.id)).name, 'shop');
      const updated = await hosted.sites.update(created.id, { allowedDomains: ['example.net'] });
      assert.deepEqual(updated.allowedDomains, ['example.net']);
      assert.deepEqual(await hosted.sites.delete(created.id), { deleted: created.id });
      await assert.rejects(hosted.sites.get(created.id), NotFoundError);
    });

    test('keys: create, list, regenerate, delete', async () => {
      const created = await hosted.keys.create({ name: 'rotating', siteId: site.id });
      assert.match(created.key, /^vf_/);
      assert.match(created.signingSecret, /^vfs_/);
      const listed = await hosted.keys.list();
      const mine = listed.find((k) => k.id === created.id);
      assert.ok(mine);
      assert.equal(mine.kind, 'site');
      assert.ok(!JSON.stringify(listed).includes(created.key));
      const regenerated = await hosted.keys.regenerate(created.id);
      assert.notEqual(regenerated.key, created.key);
      const old = new Viewfinder({ baseUrl: svc.hosted.base, apiKey: created.key });
      const refused = await old.screenshots.create({ url: svc.pages.page }).catch((e: unknown) => e);
      assert.ok(refused instanceof AuthenticationError);
      assertNoSecret(refused, created.key);
      assert.deepEqual(await hosted.keys.delete(created.id), { deleted: created.id });
    });

    test('monitors: create, run now, runs, accept a baseline, image, update, delete; usage', async () => {
      const monitor = await hosted.monitors.create({
        name: `client-test-${Date.now()}`,
        siteId: site.id,
        schedule: '@yearly',
        compare: { threshold: 0.01 },
        pages: [{ name: 'home', url: svc.pages.page, hideSelectors: ['.clock'] }],
      });
      assert.equal(monitor.pages[0]?.hasCredentials, false);
      assert.ok((await hosted.monitors.list()).some((m) => m.id === monitor.id));
      const { jobId } = await hosted.monitors.run(monitor.id);
      assert.match(jobId, /^job_/);
      const run = await eventually(async () => (await hosted.monitors.runs(monitor.id))[0], 120_000, 'the monitor run');
      assert.equal(run.trigger, 'manual');
      const page = run.pages[0];
      assert.equal(page?.outcome, 'baseline');
      assert.equal(page?.verdict, null, 'no checks, no verdict');
      const withReports = await hosted.monitors.getRun(monitor.id, run.id);
      assert.equal(withReports.pages[0]?.report?.document.status, 200);
      const accepted = await hosted.monitors.acceptBaseline(monitor.id, { runId: run.id, page: 'home' });
      assert.equal(accepted.baselines.home, page.captureImageId);
      assert.ok(isPng(await hosted.monitors.image(monitor.id, page.captureImageId as string)));
      assert.equal((await hosted.monitors.get(monitor.id)).id, monitor.id);
      assert.equal((await hosted.monitors.update(monitor.id, { suspend: true })).nextRunAt, null);

      const usage = await hosted.usage.get();
      assert.ok((usage.sites[site.id]?.captures ?? 0) > 0);
      assert.ok((usage.monitors[monitor.id]?.captures ?? 0) >= 1);
      assert.deepEqual(await hosted.monitors.delete(monitor.id), { deleted: monitor.id });
    });
  });

  describe('errors', () => {
    test('401, 400 with the server message, 404: typed, with status, never the key', async () => {
      const wrong = 'vf_wrongwrongwrongwrongwrongwrongwrongwrongwro';
      const unauthenticated = new Viewfinder({ baseUrl: svc.hosted.base, apiKey: wrong });
      const e401 = await unauthenticated.screenshots.create({ url: svc.pages.page, site_id: site.id }).catch((e: unknown) => e);
      assert.ok(e401 instanceof AuthenticationError && e401 instanceof ViewfinderError);
      assert.equal(e401.status, 401);
      assert.equal(e401.message, 'Invalid API key');
      assert.equal(e401.request, 'POST /api/screenshot');
      assertNoSecret(e401, wrong, svc.hosted.key);

      const e400 = await hosted.screenshots.create({ url: svc.pages.page, wait: 50 }).catch((e: unknown) => e);
      assert.ok(e400 instanceof InvalidRequestError);
      assert.equal(e400.status, 400);
      assert.equal(e400.message, 'wait must be a number of milliseconds from 1000 to 8000');
      assert.ok(e400.requestId);
      assertNoSecret(e400, svc.hosted.key);

      const e404 = await hosted.sites.get('site_000000000000000000000000').catch((e: unknown) => e);
      assert.ok(e404 instanceof NotFoundError);
      assert.equal(e404.status, 404);
      assert.match(e404.message, /not found/i);
      assertNoSecret(e404, svc.hosted.key);
      assert.ok(!inspect(hosted, { depth: Infinity, showHidden: true }).includes(svc.hosted.key));
    });

    test('no retry on a 400', async () => {
      let requests = 0;
      const retries: RetryInfo[] = [];
      const client = new Viewfinder({
        baseUrl: svc.hosted.base,
        apiKey: svc.hosted.key,
        siteId: site.id,
        maxRetries: 5,
        onRetry: (info) => retries.push(info),
        fetch: (input, init) => {
          requests += 1;
          return fetch(input, init);
        },
      });
      await assert.rejects(client.screenshots.create({ url: 'not a url' }), InvalidRequestError);
      assert.equal(requests, 1);
      assert.deepEqual(retries, []);
    });
  });

  describe('the busy service: 429 with Retry-After', () => {
    /** A slow capture holds the busy service's one slot; resolves once it is in flight. */
    async function holdTheSlot(client: Viewfinder, ms: number): Promise<{ held: Promise<unknown> }> {
      // With retries of its own: a probe below may reach the slot first.
      const held = client.screenshots.create({ url: `${svc.pages.slow}?ms=${ms}`, removeAds: false }, { maxRetries: 10 }).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The slot is taken once the capture has reached the renderer: a probe without retries says so.
      await eventually(async () => {
        const probe = await client.screenshots.create({ url: svc.pages.page }, { maxRetries: 0 }).then(() => undefined, (e: unknown) => e);
        return probe instanceof RateLimitError ? true : undefined;
      }, 30_000, 'the busy service to answer 429');
      // In an object: an async function that returned the promise itself would wait for it.
      return { held };
    }

    test('retried after the 429 until it succeeds; with retries off, the RateLimitError carries retryAfter', async () => {
      const retries: RetryInfo[] = [];
      const client = new Viewfinder({ baseUrl: svc.busy.base, mode: 'self-hosted', maxRetries: 20, onRetry: (info) => retries.push(info) });
      const { held } = await holdTheSlot(new Viewfinder({ baseUrl: svc.busy.base, mode: 'self-hosted' }), 5000);
      const result = await client.screenshots.create({ url: svc.pages.page });
      assert.equal(result.success, true);
      assert.ok(retries.length >= 1, 'at least one 429 was retried');
      assert.ok(retries.every((r) => r.status === 429 && r.request === 'POST /screenshot'));
      await held;

      const strict = new Viewfinder({ baseUrl: svc.busy.base, mode: 'self-hosted', maxRetries: 0 });
      const { held: heldAgain } = await holdTheSlot(strict, 5000);
      const err = await strict.screenshots.create({ url: svc.pages.page }).catch((e: unknown) => e);
      assert.ok(err instanceof RateLimitError);
      assert.equal(err.status, 429);
      assert.equal(typeof err.retryAfter, 'number');
      assert.match(err.message, /Too many requests/);
      await heldAgain;
    });
  });

  describe('timeouts and cancellation', () => {
    test('a timeout gives APITimeoutError; an abort rejects with the signal reason', async () => {
      const client = new Viewfinder({ baseUrl: svc.selfHosted.base, apiKey: svc.selfHosted.apiKey, mode: 'self-hosted', timeout: 500 });
      const timedOut = await client.screenshots.create({ url: `${svc.pages.slow}?ms=3000` }).catch((e: unknown) => e);
      assert.ok(timedOut instanceof APITimeoutError);
      assert.match(timedOut.message, /timed out after 500 ms/);
      assertNoSecret(timedOut, svc.selfHosted.apiKey);

      const controller = new AbortController();
      const pending = client.screenshots.create({ url: `${svc.pages.slow}?ms=3000` }, { signal: controller.signal, timeout: 60_000 });
      setTimeout(() => controller.abort(), 200);
      await assert.rejects(pending, { name: 'AbortError' });
      await assert.rejects(client.captures.wait('job_x', { signal: AbortSignal.abort() }), { name: 'AbortError' });
    });
  });
});
