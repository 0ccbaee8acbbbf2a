import puppeteer, { type LaunchOptions, type Page } from 'puppeteer-core';
import { Cluster } from 'puppeteer-cluster';
import { CaptureFailed, HttpError, NavigationTimeout } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { capturePage, emulateProfile } from './capture/capture-page.ts';
import { PROFILES } from './capture/profiles.ts';
import { createPageCleaner } from './capture/remove-ads/page-cleaner.ts';
import type { RendererConfig } from './config.ts';
import type { CaptureOptions, CaptureRequest, CaptureResult, Renderer } from './renderer.ts';
import { warmContextConcurrency } from './warm-context-concurrency.ts';

interface CaptureJob {
  request: CaptureRequest;
  signal: AbortSignal | undefined;
}

export function chromiumLaunchOptions(config: RendererConfig): LaunchOptions {
  return {
    executablePath: config.chromiumPath,
    headless: true,
    // New pages open at the most common profile, so a standard capture needs no emulation call.
    defaultViewport: PROFILES.standard.viewport,
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
    ],
  };
}

/** The in-process renderer: a puppeteer-cluster pool of Debian's Chromium. */
export async function createChromiumRenderer(config: RendererConfig, logger: Logger): Promise<Renderer> {
  const log = logger.child({ component: 'renderer' });
  let ready = false;
  let closing = false;
  let launches = 0;
  let crashes = 0;
  let inFlight = 0;

  const cleaner = await createPageCleaner(config, logger);
  const cluster: Cluster<CaptureJob, CaptureResult> = await Cluster.launch({
    concurrency: warmContextConcurrency({
      onLaunch: (browser) => {
        launches += 1;
        log.info({ pid: browser.process()?.pid }, 'Launched Chromium');
      },
      onDisconnect: (browser) => {
        crashes += 1;
        log.warn({ pid: browser.process()?.pid }, 'Lost Chromium; the next capture relaunches it');
      },
      preparePage: (page) => emulateProfile(page, PROFILES.standard),
    }),
    maxConcurrency: config.concurrency,
    puppeteer,
    puppeteerOptions: chromiumLaunchOptions(config),
    timeout: config.captureTimeoutMs,
    retryLimit: 0,
    workerCreationDelay: 0,
    monitor: false,
  });

  const limits = { navigationTimeoutMs: config.navigationTimeoutMs, fullPageMaxHeight: config.fullPageMaxHeight };
  const task = ({ page, data }: { page: Page; data: CaptureJob }) => {
    data.signal?.throwIfAborted();
    return capturePage(page, data.request, limits, cleaner, data.signal);
  };

  // Start every worker now, so each holds a warm context before the first request arrives.
  await Promise.all(Array.from({ length: config.concurrency }, () => cluster.execute(async () => undefined as never)));
  ready = true;
  log.info({ concurrency: config.concurrency }, 'Started the browser pool');

  return {
    isReady: () => ready && !closing,

    stats: () => ({
      capacity: config.concurrency,
      inFlight: Math.min(inFlight, config.concurrency),
      queued: Math.max(0, inFlight - config.concurrency),
      browserRestarts: Math.max(0, launches - 1),
      browserCrashes: crashes,
    }),

    async capture(request: CaptureRequest, options: CaptureOptions = {}): Promise<CaptureResult> {
      if (closing) throw new CaptureFailed('Screenshot generation failed: the renderer is shutting down');
      inFlight += 1;
      try {
        return await cluster.execute({ request, signal: options.signal }, task);
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (err instanceof HttpError) throw err;
        // puppeteer-cluster's own deadline (captureTimeoutMs) rejects with "Timeout hit: <ms>".
        if (/^Timeout hit/.test(String((err as Error)?.message))) {
          throw new NavigationTimeout('Navigation timeout: the page took too long to load or respond');
        }
        log.error({ err, host: hostOf(request.url) }, 'Capture failed');
        throw new CaptureFailed();
      } finally {
        inFlight -= 1;
      }
    },

    async close(): Promise<void> {
      closing = true;
      await cluster.idle();
      await cluster.close();
      log.info('Closed the browser pool');
    },
  };
}

function hostOf(url: string): string | undefined {
  return URL.parse(url)?.host;
}
