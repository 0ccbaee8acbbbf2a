import { defaultUserAgent, Transport, type RetryInfo } from './http.ts';
import { Captures, Destinations, Keys, Monitors, RenderLinks, Screenshots, Sites, UsageResource, Webhooks, type Context, type Mode } from './resources.ts';

export interface ViewfinderOptions {
  /** The API's address, e.g. https://viewfinder.example.com (default: the VIEWFINDER_URL variable). */
  baseUrl?: string | undefined;
  /**
   * Hosted: an account's key (`vf_...`); self-hosted: the service's API_KEY. Sent as X-API-Key.
   * Default: the VIEWFINDER_API_KEY variable; none for a self-hosted service without API_KEY.
   */
  apiKey?: string | undefined;
  /** `hosted` (default): /api/screenshot, /api/captures, the management API. `self-hosted`: /screenshot, /captures. */
  mode?: Mode;
  /** Hosted: the `site_id` of captures that name none (needed with a full-access key). */
  siteId?: string | undefined;
  /** Milliseconds one attempt may take (default 90000: a capture may take up to a minute on the server). */
  timeout?: number;
  /** Retries after a 429, a 503 or a lost connection (default 2; 0 turns them off). */
  maxRetries?: number;
  /** The longest Retry-After (in milliseconds) the library waits out itself; longer, it throws (default 60000). */
  maxRetryDelay?: number;
  /** Appended to the User-Agent, e.g. "my-app/1.2". */
  appInfo?: string;
  /** Told before each retry (for logs and metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

function environment(name: string): string | undefined {
  return typeof process === 'undefined' ? undefined : process.env[name] || undefined;
}

/**
 * A Viewfinder client: the base URL, the key, a timeout and retries, and a resource per area.
 *
 * ```ts
 * const viewfinder = new Viewfinder({ baseUrl: 'https://viewfinder.example.com', apiKey: 'vf_...', siteId: 'site_...' });
 * const png = await viewfinder.screenshots.createImage({ url: 'https://example.com/' });
 * ```
 */
export class Viewfinder {
  readonly screenshots: Screenshots;
  readonly captures: Captures;
  readonly sites: Sites;
  readonly keys: Keys;
  readonly destinations: Destinations;
  readonly monitors: Monitors;
  readonly usage: UsageResource;
  readonly renderLinks: RenderLinks;
  readonly webhooks: Webhooks;
  readonly mode: Mode;

  constructor(options: ViewfinderOptions = {}) {
    const baseUrl = options.baseUrl ?? environment('VIEWFINDER_URL');
    if (!baseUrl) throw new TypeError('Viewfinder: give baseUrl (or set VIEWFINDER_URL), e.g. https://viewfinder.example.com');
    this.mode = options.mode ?? 'hosted';
    const transport = new Transport({
      baseUrl,
      apiKey: options.apiKey ?? environment('VIEWFINDER_API_KEY'),
      timeout: options.timeout ?? 90_000,
      maxRetries: options.maxRetries ?? 2,
      maxRetryDelay: options.maxRetryDelay ?? 60_000,
      userAgent: options.appInfo ? `${defaultUserAgent()} ${options.appInfo}` : defaultUserAgent(),
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      onRetry: options.onRetry,
    });
    const context: Context = { transport, mode: this.mode, siteId: options.siteId };
    this.screenshots = new Screenshots(context);
    this.captures = new Captures(context);
    this.sites = new Sites(context);
    this.keys = new Keys(context);
    this.destinations = new Destinations(context);
    this.monitors = new Monitors(context);
    this.usage = new UsageResource(context);
    this.renderLinks = new RenderLinks(context);
    this.webhooks = new Webhooks();
  }
}

/**
 * The API's operations (operationId in GET /api/openapi.json) and the method that calls each; a
 * test fails when the document has an operation this list lacks.
 */
export const OPERATIONS = {
  captureScreenshot: 'screenshots.create, screenshots.createImage',
  listSites: 'sites.list',
  createSite: 'sites.create',
  getSite: 'sites.get',
  updateSite: 'sites.update',
  deleteSite: 'sites.delete',
  listKeys: 'keys.list',
  createKey: 'keys.create',
  deleteKey: 'keys.delete',
  regenerateKey: 'keys.regenerate',
  getUsage: 'usage.get',
  renderLink: 'renderLinks.sign, signRenderLink',
  submitCaptures: 'captures.submit, captures.submitBatch',
  getCapture: 'captures.get, captures.image, captures.wait',
  listMonitors: 'monitors.list',
  createMonitor: 'monitors.create',
  getMonitor: 'monitors.get',
  updateMonitor: 'monitors.update',
  deleteMonitor: 'monitors.delete',
  listMonitorRuns: 'monitors.runs',
  getMonitorRun: 'monitors.getRun',
  runMonitorNow: 'monitors.run',
  acceptMonitorBaseline: 'monitors.acceptBaseline',
  getMonitorImage: 'monitors.image',
  listDestinations: 'destinations.list',
  createDestination: 'destinations.create',
  getDestination: 'destinations.get',
  updateDestination: 'destinations.update',
  deleteDestination: 'destinations.delete',
} as const;
