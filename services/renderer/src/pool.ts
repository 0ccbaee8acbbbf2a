import puppeteer, { type Browser, type LaunchOptions, type Page } from 'puppeteer-core';
import { Cluster } from 'puppeteer-cluster';
import { CaptureFailed, HttpError, JourneyFailed, NavigationTimeout } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { createAdmission } from './admission.ts';
import { createBrowserDirs, sweepStaleBrowserDirs } from './browser-dirs.ts';
import { capturePage, type CaptureLimits, type PageCleaner } from './capture/capture-page.ts';
import { prepareCapturePage } from './capture/prepare-page.ts';
import { SettleHints } from './capture/settle-hints.ts';
import { PROFILES } from './capture/profiles.ts';
import { createPageCleaner } from './capture/remove-ads/page-cleaner.ts';
import type { RendererConfig } from './config.ts';
import { startFilteringProxy } from './guard/filtering-proxy.ts';
import { checkUrlInScope, interceptRequests, type DomainScope } from './guard/domain-scope.ts';
import { requestRulesOf } from './guard/request-rules.ts';
import { watchMainFrame } from './guard/navigation-watch.ts';
import { createNetworkGuard, type NetworkGuard } from './guard/network-guard.ts';
import { dispatchPromptly } from './prompt-dispatch.ts';
import type { CaptureOptions, CaptureRequest, CaptureResult, Renderer } from './renderer.ts';
import { killProcessGroup, warmContextConcurrency } from './warm-context-concurrency.ts';
import { currentTraceparent, inSpan, startSpan, tracingOn, type OpenSpan } from '../../../lib/tracing.ts';
import { captureSpanAttributes, tracePageCleaner } from './capture/phase-spans.ts';

interface CaptureJob {
  request: CaptureRequest;
  /** Aborts on the capture's deadline or when its client goes away. */
  signal: AbortSignal;
  /** Set once a worker has given the job its page. */
  page?: Page;
  /** The dispatching span's W3C traceparent (lib/tracing.ts): the worker's spans join its trace. */
  traceparent?: string;
  /** `renderer.context`, from the job's dispatch until a worker hands it a page in a fresh context. */
  contextSpan?: OpenSpan;
}

/** How long an aborted capture's browser may take to let go before it counts as hung and is killed. */
const HANG_GRACE_MS = 5000;

export interface ChromiumNetworkOptions {
  /** Port of the filtering proxy on 127.0.0.1 that all of the browser's traffic goes through. */
  proxyPort?: number;
}

export function chromiumLaunchOptions(config: RendererConfig, network: ChromiumNetworkOptions = {}): LaunchOptions {
  return {
    executablePath: config.chromiumPath,
    headless: true,
    // New pages open at the most common profile, so a standard capture needs no emulation call.
    defaultViewport: PROFILES.standard.viewport,
    // Chromium's own pop-up blocker stays on: a pop-up would share the page's renderer and pause it
    // for the debugger while puppeteer attaches to it.
    ignoreDefaultArgs: ['--disable-popup-blocking'],
    // Shutdown is ours to sequence: drain captures first, then close Chromium.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    args: [
      ...(config.chromiumSandbox ? [] : ['--no-sandbox']),
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-domain-reliability',
      '--disable-breakpad',
      '--no-first-run',
      '--no-default-browser-check',
      '--hide-scrollbars',
      '--mute-audio',
      '--force-color-profile=srgb',
      '--font-render-hinting=none',
      // Each capture runs in its own browser context, which always gets its own renderer process.
      // Site isolation on top of that would swap processes again on the first navigation of every
      // capture, doubling its CPU cost; within one capture's page there is no user data to protect.
      '--disable-site-isolation-trials',
      '--disable-features=IsolateOrigins,site-per-process',
      ...(network.proxyPort === undefined ? [] : guardedNetworkArgs(network.proxyPort)),
    ],
  };
}

/**
 * Every byte the browser sends goes through the filtering proxy. `<-loopback>` matters: without it
 * Chromium bypasses any proxy for localhost and 127.0.0.0/8, which would void the guard. The other
 * flags close the paths a proxy never sees: QUIC, WebRTC's UDP, and Chromium's own DNS (with a
 * proxy it needs none, so any resolution it still tries fails).
 */
function guardedNetworkArgs(proxyPort: number): string[] {
  return [
    `--proxy-server=http://127.0.0.1:${proxyPort}`,
    '--proxy-bypass-list=<-loopback>',
    '--disable-quic',
    // WebRTC may use TCP through the proxy only; no direct UDP (STUN) at all. The tests show that
    // this spelling is the one Debian's Chromium obeys (`--force-webrtc-...` is ignored).
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  ];
}

/** The in-process renderer: a puppeteer-cluster pool of Debian's Chromium, behind the network guard. */
export async function createChromiumRenderer(config: RendererConfig, logger: Logger): Promise<Renderer> {
  const log = logger.child({ component: 'renderer' });
  let ready = false;
  let closing = false;
  let launches = 0;
  let crashes = 0;
  let latestBrowser: Browser | undefined;
  let closed: Promise<void> | undefined;

  const swept = await sweepStaleBrowserDirs(config.tempRoot, config.runtimeRoot);
  if (swept > 0) log.warn({ directories: swept, root: config.tempRoot, runtimeRoot: config.runtimeRoot }, 'Removed browser directories left by a service that died');

  const guard = createNetworkGuard(config.networkAllowlist);
  const proxy = await startFilteringProxy(guard, logger);
  const admission = createAdmission(config.concurrency, config.queueLimit);

  const cleaner = tracePageCleaner(await createPageCleaner(config, logger));
  const cluster: Cluster<CaptureJob, CaptureResult> = await Cluster.launch({
    concurrency: warmContextConcurrency({
      prepareLaunch: async () => {
        const dirs = await createBrowserDirs(config.tempRoot, config.runtimeRoot);
        return {
          // The environment passes through unchanged apart from TMPDIR, which keeps Chromium's
          // temporary files inside the directory that is removed with it.
          options: { userDataDir: dirs.userDataDir, env: { ...process.env, TMPDIR: dirs.tempDir } },
          afterExit: () => dirs.remove(),
          onLaunched: (pid: number) => dirs.recordBrowserPid(pid),
        };
      },
      onLaunch: (browser) => {
        launches += 1;
        latestBrowser = browser;
        log.info({ pid: browser.process()?.pid }, 'Launched Chromium');
      },
      onDisconnect: (browser) => {
        crashes += 1;
        log.warn({ pid: browser.process()?.pid }, 'Lost Chromium; a new one takes the next captures');
      },
      onRecycle: (browser, reason) => log.info({ pid: browser.process()?.pid, reason }, 'Recycling Chromium'),
      preparePage: async (page) => {
        await Promise.all([prepareCapturePage(page), cleaner.preparePage(page)]);
      },
      recycleAfterCaptures: config.recycleAfterCaptures,
      memoryLimitBytes: config.browserMemoryLimitBytes,
    }),
    maxConcurrency: config.concurrency,
    puppeteer,
    puppeteerOptions: chromiumLaunchOptions(config, { proxyPort: proxy.port }),
    // Only a backstop: each capture's own deadline aborts it first, and a browser that ignores the
    // abort is killed HANG_GRACE_MS later.
    timeout: config.captureTimeoutMs + 2 * HANG_GRACE_MS,
    retryLimit: 0,
    workerCreationDelay: 0,
    monitor: false,
  });
  dispatchPromptly(cluster);

  const limits: CaptureLimits = {
    navigationTimeoutMs: config.navigationTimeoutMs,
    fullPageMaxHeight: config.fullPageMaxHeight,
    pdfMaxPages: config.pdfMaxPages,
    // Two calm frames (33 ms) rather than three: the corpus and smart-wait tests stay complete, and
    // every capture waits 17 ms less past its last change (bench/corpus.bench.ts).
    smartWait: { maxMs: config.smartWaitMaxMs, calmFrames: 2, churnToleranceMs: 1000 },
    longRequestMs: 3000,
    settleHints: new SettleHints(),
  };
  const task = ({ page, data }: { page: Page; data: CaptureJob }) =>
    data.traceparent === undefined
      ? runCapture(page, data, guard, limits, cleaner, log)
      : inSpan('renderer.capture', captureSpanAttributes(data.request), () => runCapture(page, data, guard, limits, cleaner, log), { parent: data.traceparent });

  // Start every worker now, so each holds a warm context before the first request arrives.
  await Promise.all(Array.from({ length: config.concurrency }, () => cluster.execute(async () => undefined as never)));
  ready = true;
  log.info({ concurrency: config.concurrency, queueLimit: config.queueLimit, proxyPort: proxy.port }, 'Started the browser pool');

  // An aborted job that has not let go of its slot HANG_GRACE_MS later is stuck in a browser that no
  // longer answers, possibly before it even got a page: that browser is killed and replaced.
  const killIfStillBusy = (done: Promise<void>, data: CaptureJob) => {
    const timer = setTimeout(() => {
      const browser = data.page?.browser() ?? latestBrowser;
      log.warn({ pid: browser?.process()?.pid }, 'Chromium did not let go of an aborted capture; killing it');
      if (browser) killProcessGroup(browser);
    }, HANG_GRACE_MS);
    void done.finally(() => clearTimeout(timer));
  };

  const deadlineError = () =>
    new NavigationTimeout(`Navigation timeout: the capture did not finish within ${config.captureTimeoutMs} ms, time queued included`);

  return {
    isReady: () => ready && !closing,

    stats: () => ({
      capacity: config.concurrency,
      inFlight: admission.running(),
      queued: admission.queued(),
      browserRestarts: Math.max(0, launches - 1),
      browserCrashes: crashes,
    }),

    async capture(request: CaptureRequest, options: CaptureOptions = {}): Promise<CaptureResult> {
      if (closing) throw new CaptureFailed('Screenshot generation failed: the renderer is shutting down');
      // One signal for both ways a capture ends early: its deadline, counted from now, or its client.
      const abort = new AbortController();
      const deadline = setTimeout(() => abort.abort(deadlineError()), config.captureTimeoutMs);
      const onClientGone = () => abort.abort(options.signal?.reason);
      if (options.signal?.aborted) onClientGone();
      options.signal?.addEventListener('abort', onClientGone, { once: true });
      try {
        // Checked before queueing, so a blocked URL gets its precise error and never takes a slot.
        // An html document has no URL to check; everything it loads goes through the proxy's guard.
        if (request.html === undefined) await guard.checkUrl(request.url);
        if (request.allowedDomains) checkUrlInScope(request.url, request.allowedDomains, request);
        const slot = tracingOn() ? await inSpan('renderer.slot', undefined, () => admission.acquire(abort.signal)) : await admission.acquire(abort.signal);
        const started = performance.now();
        const data: CaptureJob = { request, signal: abort.signal };
        if (tracingOn()) Object.assign(data, { traceparent: currentTraceparent() ?? '', contextSpan: startSpan('renderer.context') });
        const job = cluster.execute(data, task);
        // The slot stays taken until the browser is really done, even when the client was answered early.
        const done = job.then(
          () => slot.release(performance.now() - started),
          () => slot.release(performance.now() - started),
        );
        abort.signal.addEventListener('abort', () => killIfStillBusy(done, data), { once: true });
        if (data.contextSpan) void done.finally(() => data.contextSpan?.end());
        return await untilAborted(job, abort.signal);
      } catch (err) {
        if (abort.signal.aborted) throw abort.signal.reason;
        if (err instanceof HttpError) throw err;
        // puppeteer-cluster's backstop rejects with "Timeout hit: <ms>".
        if (/^Timeout hit/.test(String((err as Error)?.message))) throw deadlineError();
        log.error({ err, host: hostOf(request.url) }, 'Capture failed');
        throw new CaptureFailed();
      } finally {
        clearTimeout(deadline);
        options.signal?.removeEventListener('abort', onClientGone);
      }
    },

    close(): Promise<void> {
      closing = true;
      closed ??= (async () => {
        await cluster.idle();
        await cluster.close();
        await proxy.close();
        log.info('Closed the browser pool');
      })();
      return closed;
    },
  };
}

/** One capture on a worker's fresh page: stops the page when the capture is aborted, and kills a browser that hangs. */
async function runCapture(
  page: Page,
  job: CaptureJob,
  guard: NetworkGuard,
  limits: CaptureLimits,
  cleaner: PageCleaner | undefined,
  log: Logger,
): Promise<CaptureResult> {
  job.page = page;
  job.contextSpan?.end();
  job.signal.throwIfAborted();
  // Closing the page stops its work. A browser that cannot even do that within HANG_GRACE_MS is
  // hung, and is killed so that the pool launches a fresh one.
  const onAbort = () => {
    const hangTimer = setTimeout(() => {
      log.warn({ pid: page.browser().process()?.pid }, 'Chromium did not respond to an aborted capture; killing it');
      killProcessGroup(page.browser());
    }, HANG_GRACE_MS);
    const responded = () => clearTimeout(hangTimer);
    page.close().then(responded, () => (page.browser().connected ? undefined : responded()));
  };
  job.signal.addEventListener('abort', onAbort, { once: true });
  const navigations = watchMainFrame(page, job.request.url, guard);
  let scope: DomainScope | undefined;
  // A page that left the allowed domains is refused whatever else went wrong with it.
  const failure = async () => scope?.refusal() ?? (await navigations.failure());
  try {
    const { allowedDomains } = job.request;
    const rules = requestRulesOf(job.request);
    if (allowedDomains || rules) scope = await interceptRequests(page, allowedDomains, rules);
    // A journey's steps go where the first page went: through the same guard, the same domains, the same watch.
    const journeyGuard = {
      async checkUrl(url: string) {
        await guard.checkUrl(url);
        if (allowedDomains) checkUrlInScope(url, allowedDomains);
      },
      failure,
    };
    const result = await capturePage(page, job.request, limits, cleaner, job.signal, journeyGuard).catch(async (err: unknown) => {
      // A failed step already says why, the guard's refusal included, with its report and picture.
      if (err instanceof JourneyFailed) throw err;
      throw (await failure()) ?? err;
    });
    const refused = await failure();
    if (refused) throw refused;
    return result;
  } finally {
    scope?.stop();
    navigations.stop();
    job.signal.removeEventListener('abort', onAbort);
  }
}

/** Settles with `work`, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function hostOf(url: string): string | undefined {
  return URL.parse(url)?.host;
}
