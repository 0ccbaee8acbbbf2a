/** A resource per area of the API, as `client.<area>.<operation>(...)`. */
import { randomUUID } from 'node:crypto';
import { CaptureWaitTimeoutError } from './errors.ts';
import { sleep, type Call, type RequestOptions, type Transport } from './http.ts';
import { signRenderLink, type RenderLinkOptions } from './render-links.ts';
import { constructWebhookEvent, verifyWebhookSignature, type RawBody, type SignatureHeaderValue, type VerifyOptions } from './webhooks.ts';
import type {
  AcceptBaselineParams,
  AcceptedCapture,
  ApiKey,
  AsyncCaptureOptions,
  CaptureOptions,
  CaptureStatus,
  Deleted,
  Destination,
  DestinationCreateParams,
  DestinationUpdateParams,
  Format,
  IssuedApiKey,
  KeyCreateParams,
  Monitor,
  MonitorCreateParams,
  MonitorRun,
  MonitorRunWithReports,
  MonitorUpdateParams,
  RunNowResult,
  ScreenshotImage,
  ScreenshotOptions,
  ScreenshotResult,
  Site,
  SiteCreateParams,
  SiteUpdateParams,
  Usage,
  WebhookEvent,
} from './types.ts';

export type Mode = 'hosted' | 'self-hosted';

/** What the resources share: the transport, the mode and the default site. */
export interface Context {
  transport: Transport;
  mode: Mode;
  siteId: string | undefined;
}

const MEDIA_TYPES: Record<Format, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' };

const id = (value: string) => encodeURIComponent(value);

function withSite<T extends CaptureOptions>(context: Context, options: T): T {
  if (context.mode !== 'hosted' || context.siteId === undefined || options.site_id !== undefined) return options;
  return { ...options, site_id: context.siteId };
}

/** What every resource holds: the context of the client that made it. */
abstract class Resource {
  protected readonly context: Context;
  constructor(context: Context) {
    this.context = context;
  }
}

function header(response: Response, name: string): string | undefined {
  return response.headers.get(`Viewfinder-${name}`) ?? undefined;
}
function numberHeader(response: Response, name: string): number | undefined {
  const value = header(response, name);
  return value === undefined ? undefined : Number(value);
}

/** Synchronous captures: `POST /api/screenshot` (hosted) or `POST /screenshot` (self-hosted). */
export class Screenshots extends Resource {
  #call(options: ScreenshotOptions, accept: string | undefined, requestOptions: RequestOptions | undefined): Call {
    const path = this.context.mode === 'hosted' ? '/api/screenshot' : '/screenshot';
    return { method: 'POST', path, body: withSite(this.context, options), ...(accept ? { accept } : {}), options: requestOptions };
  }

  /** Captures and answers the JSON result, the image as a data URI. */
  create(options: ScreenshotOptions, requestOptions?: RequestOptions): Promise<ScreenshotResult> {
    return this.context.transport.json(this.#call(options, undefined, requestOptions));
  }

  /** Captures and answers the image's bytes (or the PDF's), with the other fields from the answer's headers. */
  async createImage(options: CaptureOptions, requestOptions?: RequestOptions): Promise<ScreenshotImage> {
    const { response, body } = await this.context.transport.send(this.#call(options, MEDIA_TYPES[options.format ?? 'png'], requestOptions));
    const truncated = header(response, 'Truncated');
    const cache = header(response, 'Cache');
    return {
      bytes: body,
      contentType: response.headers.get('Content-Type') ?? MEDIA_TYPES[options.format ?? 'png'],
      width: numberHeader(response, 'Width'),
      height: numberHeader(response, 'Height'),
      fileSize: numberHeader(response, 'File-Size'),
      processingTimeMs: numberHeader(response, 'Processing-Time-Ms'),
      waitMs: numberHeader(response, 'Wait-Ms'),
      truncated: truncated === undefined ? undefined : truncated === 'true',
      cache: cache === 'hit' || cache === 'miss' ? cache : undefined,
      siteId: header(response, 'Site-Id'),
    };
  }
}

export interface WaitOptions {
  /** Milliseconds to wait in all before giving up with CaptureWaitTimeoutError (default 120000). */
  timeout?: number;
  /** Milliseconds between two polls (default 1000). */
  pollInterval?: number;
  signal?: AbortSignal;
}

/** Asynchronous captures: submit, batch, poll, wait. */
export class Captures extends Resource {
  get #base(): string {
    return this.context.mode === 'hosted' ? '/api/captures' : '/captures';
  }

  /**
   * Queues one capture; answers at once with its id. Without an idempotencyKey the library makes
   * one, so that a retry after a lost answer cannot queue the capture twice.
   */
  submit(options: AsyncCaptureOptions, requestOptions: RequestOptions = {}): Promise<AcceptedCapture> {
    const body = withSite(this.context, options);
    const idempotencyKey = body.idempotencyKey === undefined ? (requestOptions.idempotencyKey ?? randomUUID()) : undefined;
    return this.context.transport.json({
      method: 'POST',
      path: this.#base,
      body,
      options: { ...requestOptions, ...(idempotencyKey ? { idempotencyKey } : {}) },
    });
  }

  /**
   * Queues 1 to 100 captures at once, all or none; answers one id each, in order. Captures without an
   * idempotencyKey of their own get `<Idempotency-Key>:<index>` (the library makes the header unless given).
   */
  async submitBatch(captures: AsyncCaptureOptions[], requestOptions: RequestOptions = {}): Promise<AcceptedCapture[]> {
    const answer = await this.context.transport.json<{ captures: AcceptedCapture[] }>({
      method: 'POST',
      path: this.#base,
      body: { captures: captures.map((capture) => withSite(this.context, capture)) },
      options: { ...requestOptions, idempotencyKey: requestOptions.idempotencyKey ?? randomUUID() },
    });
    return answer.captures;
  }

  /** The capture's status, with its result once succeeded. */
  get(captureId: string, requestOptions?: RequestOptions): Promise<CaptureStatus> {
    return this.context.transport.json({ method: 'GET', path: `${this.#base}/${id(captureId)}`, options: requestOptions });
  }

  /** The image of a succeeded capture (ConflictError while it has not succeeded). */
  async image(captureId: string, requestOptions?: RequestOptions): Promise<Uint8Array> {
    const { body } = await this.context.transport.send({ method: 'GET', path: `${this.#base}/${id(captureId)}`, accept: 'image/*', options: requestOptions });
    return body;
  }

  /**
   * Polls until the capture has succeeded or failed, and answers its last status (check `status`);
   * throws CaptureWaitTimeoutError after `timeout` milliseconds.
   */
  async wait(captureId: string, options: WaitOptions = {}): Promise<CaptureStatus> {
    const timeout = options.timeout ?? 120_000;
    const pollInterval = options.pollInterval ?? 1000;
    const deadline = Date.now() + timeout;
    for (;;) {
      const status = await this.get(captureId, options.signal ? { signal: options.signal } : {});
      if (status.status === 'succeeded' || status.status === 'failed') return status;
      const left = deadline - Date.now();
      if (left <= 0) throw new CaptureWaitTimeoutError(`Capture ${captureId} was still ${status.status} after ${timeout} ms`, status);
      await sleep(Math.min(pollInterval, left), options.signal);
    }
  }
}

/** Sites of the account (hosted mode, a full-access key). */
export class Sites extends Resource {
  async list(requestOptions?: RequestOptions): Promise<Site[]> {
    return (await this.context.transport.json<{ sites: Site[] }>({ method: 'GET', path: '/api/sites', options: requestOptions })).sites;
  }
  create(params: SiteCreateParams, requestOptions?: RequestOptions): Promise<Site> {
    return this.context.transport.json({ method: 'POST', path: '/api/sites', body: params, options: requestOptions });
  }
  get(siteId: string, requestOptions?: RequestOptions): Promise<Site> {
    return this.context.transport.json({ method: 'GET', path: `/api/sites/${id(siteId)}`, options: requestOptions });
  }
  update(siteId: string, params: SiteUpdateParams, requestOptions?: RequestOptions): Promise<Site> {
    return this.context.transport.json({ method: 'PATCH', path: `/api/sites/${id(siteId)}`, body: params, options: requestOptions });
  }
  /** Deletes the site and the keys scoped to it. */
  delete(siteId: string, requestOptions?: RequestOptions): Promise<Deleted> {
    return this.context.transport.json({ method: 'DELETE', path: `/api/sites/${id(siteId)}`, options: requestOptions });
  }
}

/** Storage destinations of the account (hosted mode, a full-access key): buckets captures can be written to (docs/storage.md). */
export class Destinations extends Resource {
  async list(requestOptions?: RequestOptions): Promise<Destination[]> {
    return (await this.context.transport.json<{ destinations: Destination[] }>({ method: 'GET', path: '/api/destinations', options: requestOptions })).destinations;
  }
  /** Registers a bucket; the credentials are stored sealed and never answered. */
  create(params: DestinationCreateParams, requestOptions?: RequestOptions): Promise<Destination> {
    return this.context.transport.json({ method: 'POST', path: '/api/destinations', body: params, options: requestOptions });
  }
  get(name: string, requestOptions?: RequestOptions): Promise<Destination> {
    return this.context.transport.json({ method: 'GET', path: `/api/destinations/${id(name)}`, options: requestOptions });
  }
  /** `credentials` replaces both keys. */
  update(name: string, params: DestinationUpdateParams, requestOptions?: RequestOptions): Promise<Destination> {
    return this.context.transport.json({ method: 'PATCH', path: `/api/destinations/${id(name)}`, body: params, options: requestOptions });
  }
  /** Removes the destination, not the objects written to it. */
  delete(name: string, requestOptions?: RequestOptions): Promise<Deleted> {
    return this.context.transport.json({ method: 'DELETE', path: `/api/destinations/${id(name)}`, options: requestOptions });
  }
}

/** API keys of the account (hosted mode, a full-access key). */
export class Keys extends Resource {
  /** Every key, never a secret. */
  async list(requestOptions?: RequestOptions): Promise<ApiKey[]> {
    return (await this.context.transport.json<{ keys: ApiKey[] }>({ method: 'GET', path: '/api/keys', options: requestOptions })).keys;
  }
  /** A new key: the answer holds the key and its signing secret, this once. */
  create(params: KeyCreateParams, requestOptions?: RequestOptions): Promise<IssuedApiKey> {
    return this.context.transport.json({ method: 'POST', path: '/api/keys', body: params, options: requestOptions });
  }
  /** A new key and signing secret, this once; the old ones stop working at once. */
  regenerate(keyId: string, requestOptions?: RequestOptions): Promise<IssuedApiKey> {
    return this.context.transport.json({ method: 'POST', path: `/api/keys/${id(keyId)}/regenerate`, options: requestOptions });
  }
  delete(keyId: string, requestOptions?: RequestOptions): Promise<Deleted> {
    return this.context.transport.json({ method: 'DELETE', path: `/api/keys/${id(keyId)}`, options: requestOptions });
  }
}

/** Page monitors (hosted mode, a full-access key). */
export class Monitors extends Resource {
  list(requestOptions?: RequestOptions): Promise<Monitor[]> {
    return this.context.transport.json({ method: 'GET', path: '/api/monitors', options: requestOptions });
  }
  create(params: MonitorCreateParams, requestOptions?: RequestOptions): Promise<Monitor> {
    return this.context.transport.json({ method: 'POST', path: '/api/monitors', body: params, options: requestOptions });
  }
  get(monitorId: string, requestOptions?: RequestOptions): Promise<Monitor> {
    return this.context.transport.json({ method: 'GET', path: `/api/monitors/${id(monitorId)}`, options: requestOptions });
  }
  update(monitorId: string, params: MonitorUpdateParams, requestOptions?: RequestOptions): Promise<Monitor> {
    return this.context.transport.json({ method: 'PATCH', path: `/api/monitors/${id(monitorId)}`, body: params, options: requestOptions });
  }
  /** Deletes the monitor, its runs and every picture. */
  delete(monitorId: string, requestOptions?: RequestOptions): Promise<Deleted> {
    return this.context.transport.json({ method: 'DELETE', path: `/api/monitors/${id(monitorId)}`, options: requestOptions });
  }
  /** Runs it now; at most one run-now is pending per monitor (a second call answers the same jobId). */
  run(monitorId: string, requestOptions?: RequestOptions): Promise<RunNowResult> {
    return this.context.transport.json({ method: 'POST', path: `/api/monitors/${id(monitorId)}/runs`, options: requestOptions });
  }
  /** The kept runs, newest first (at most the monitor's historyLimit: the API does not paginate them). */
  runs(monitorId: string, requestOptions?: RequestOptions): Promise<MonitorRun[]> {
    return this.context.transport.json({ method: 'GET', path: `/api/monitors/${id(monitorId)}/runs`, options: requestOptions });
  }
  /** One run, each page with the report of its visit and the verdict of its checks. */
  getRun(monitorId: string, runId: string, requestOptions?: RequestOptions): Promise<MonitorRunWithReports> {
    return this.context.transport.json({ method: 'GET', path: `/api/monitors/${id(monitorId)}/runs/${id(runId)}`, options: requestOptions });
  }
  /** Accepts a run's picture of a page as that page's baseline. */
  acceptBaseline(monitorId: string, params: AcceptBaselineParams, requestOptions?: RequestOptions): Promise<Monitor> {
    return this.context.transport.json({ method: 'POST', path: `/api/monitors/${id(monitorId)}/baseline`, body: params, options: requestOptions });
  }
  /** A capture, diff picture or baseline of the monitor, as PNG bytes. */
  async image(monitorId: string, imageId: string, requestOptions?: RequestOptions): Promise<Uint8Array> {
    const call: Call = { method: 'GET', path: `/api/monitors/${id(monitorId)}/images/${id(imageId)}`, accept: 'image/png', options: requestOptions };
    return (await this.context.transport.send(call)).body;
  }
}

/** Usage of the account: captures, failures and bytes by site, key and monitor. */
export class UsageResource extends Resource {
  get(requestOptions?: RequestOptions): Promise<Usage> {
    return this.context.transport.json({ method: 'GET', path: '/api/usage', options: requestOptions });
  }
}

export interface SignParams {
  options: RenderLinkOptions | ReadonlyArray<readonly [string, string]>;
  keyId: string;
  signingSecret: string;
  expires?: number;
  expiresIn?: number;
}

/** Render links on this client's base URL (see signRenderLink). */
export class RenderLinks extends Resource {
  sign(params: SignParams): string {
    return signRenderLink({ ...params, origin: this.context.transport.baseUrl });
  }
}

/** Webhook verification (see constructWebhookEvent); needs no client, only the signing secret. */
export class Webhooks {
  /** The verified event; throws WebhookSignatureError when the signature does not check or is too old. */
  constructEvent(body: RawBody, header: SignatureHeaderValue, secret: string, options?: VerifyOptions): WebhookEvent {
    return constructWebhookEvent(body, header, secret, options);
  }
  verify(body: RawBody, header: SignatureHeaderValue, secret: string, options?: VerifyOptions): boolean {
    return verifyWebhookSignature(body, header, secret, options);
  }
}
