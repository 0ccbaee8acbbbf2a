import ConcurrencyModule from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import type { JobInstance, ResourceData, WorkerInstance } from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import type { Browser, BrowserContext, LaunchOptions, Page, PuppeteerNode } from 'puppeteer-core';

const ConcurrencyImplementation = ConcurrencyModule.default;

interface WarmResources extends ResourceData {
  context: BrowserContext;
  page: Page;
}

export interface WarmContextHooks {
  onLaunch?(browser: Browser): void;
  onDisconnect?(browser: Browser): void;
  /** Readies a spare page before any job takes it, e.g. emulating the most common profile. */
  preparePage?(page: Page): Promise<void>;
}

/**
 * A puppeteer-cluster concurrency model: one Chromium, and a fresh incognito browser context per
 * job, so no cookies, cache or storage pass between captures.
 *
 * Unlike the built-in CONCURRENCY_CONTEXT, creating and closing contexts stays off the critical
 * path: each worker holds a spare context with its page already open, taken at the start of a job
 * and replaced in the background once the job is done; a used context is closed without the job
 * waiting for it.
 * When Chromium dies, the next job relaunches it.
 */
export function warmContextConcurrency(hooks: WarmContextHooks = {}) {
  return class WarmContextConcurrency extends ConcurrencyImplementation {
    #browser: Browser | null = null;
    #launching: Promise<Browser> | null = null;
    #closed = false;

    override async init(): Promise<void> {
      await this.#connectedBrowser();
    }

    override async close(): Promise<void> {
      this.#closed = true;
      const browser = this.#browser ?? (await this.#launching?.catch(() => null));
      this.#browser = null;
      await browser?.close().catch(() => browser.process()?.kill('SIGKILL'));
    }

    override async workerInstance(): Promise<WorkerInstance> {
      let spare: Promise<WarmResources> | null = this.#warm();
      spare.catch(() => {});

      const take = async (): Promise<WarmResources> => {
        const pending = spare ?? this.#warm();
        spare = null;
        const resources = await pending.catch(() => null);
        if (resources && resources.context.browser().connected && !resources.page.isClosed()) return resources;
        if (resources) dispose(resources);
        return this.#warm();
      };

      return {
        jobInstance: async (): Promise<JobInstance> => {
          const resources = await take();
          return {
            resources,
            // The result does not wait for the used context to close. The next spare is made only now,
            // because making it during the capture slows that capture's navigation down.
            close: async () => {
              dispose(resources);
              spare = this.#warm();
              spare.catch(() => {});
            },
          };
        },
        close: async () => {
          const pending = spare;
          spare = null;
          const resources = await pending?.catch(() => null);
          if (resources) dispose(resources);
        },
        repair: async () => {
          spare = null;
          const browser = this.#browser;
          if (browser && !browser.connected) this.#browser = null;
        },
      };
    }

    async #warm(): Promise<WarmResources> {
      const browser = await this.#connectedBrowser();
      // A capture never writes files: a URL that is a download fails instead (capture-page.ts says why).
      const context = await browser.createBrowserContext({ downloadBehavior: { policy: 'deny' } });
      try {
        const page = await context.newPage();
        await hooks.preparePage?.(page);
        return { context, page };
      } catch (err) {
        dispose({ context } as WarmResources);
        throw err;
      }
    }

    #connectedBrowser(): Promise<Browser> {
      if (this.#closed) return Promise.reject(new Error('the browser pool is closed'));
      if (this.#browser?.connected) return Promise.resolve(this.#browser);
      this.#launching ??= this.#launch().finally(() => {
        this.#launching = null;
      });
      return this.#launching;
    }

    async #launch(): Promise<Browser> {
      const puppeteer = this.puppeteer as PuppeteerNode;
      const browser = await puppeteer.launch(this.options as LaunchOptions);
      browser.once('disconnected', () => {
        if (this.#browser === browser) this.#browser = null;
        if (!this.#closed) hooks.onDisconnect?.(browser);
      });
      this.#browser = browser;
      hooks.onLaunch?.(browser);
      return browser;
    }
  };
}

function dispose(resources: WarmResources): void {
  void resources.context.close().catch(() => {});
}
