import ConcurrencyModule from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import type { JobInstance, ResourceData, WorkerInstance } from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation.js';
import type { Browser, BrowserContext, LaunchOptions, Page, PuppeteerNode } from 'puppeteer-core';
import { killProcessGroupOf } from './process-group.ts';
import { processTreeRss } from './process-memory.ts';

const ConcurrencyImplementation = ConcurrencyModule.default;

/** One Chromium and what the pool knows about it. */
interface BrowserEntry {
  browser: Browser;
  /** Captures started on it. */
  captures: number;
  /** Captures running on it now. */
  active: number;
  /** No new capture goes to it; it closes once its last capture is done. */
  retiring: boolean;
  lastMemoryCheck: number;
  /** Settles once the process is gone and its directories are removed. */
  exited: Promise<void>;
}

interface WarmResources extends ResourceData {
  context: BrowserContext;
  page: Page;
  entry: BrowserEntry;
}

export type RecycleReason = 'captures' | 'memory';

export interface PreparedLaunch {
  options: Partial<LaunchOptions>;
  /** Runs once the browser is up, with its process id. */
  onLaunched?(pid: number): Promise<void>;
  /** Runs once the browser's process has exited, e.g. to remove its directories. */
  afterExit(): Promise<void>;
}

export interface WarmContextHooks {
  /** Per-browser launch options (its own directories), made before each launch. */
  prepareLaunch?(): Promise<PreparedLaunch>;
  onLaunch?(browser: Browser): void;
  /** Chromium went away without being asked to (crash, kill). */
  onDisconnect?(browser: Browser): void;
  onRecycle?(browser: Browser, reason: RecycleReason): void;
  /** Readies a spare page before any job takes it, e.g. emulating the most common profile. */
  preparePage?(page: Page): Promise<void>;
  /** Retire a browser after this many captures (0: never). */
  recycleAfterCaptures?: number;
  /** Retire a browser whose process tree holds more resident memory than this (0: never). */
  memoryLimitBytes?: number;
}

const MEMORY_CHECK_INTERVAL_MS = 5000;

/**
 * A puppeteer-cluster concurrency model: one Chromium, and a fresh incognito browser context per
 * job, so no cookies, cache or storage pass between captures.
 *
 * Unlike the built-in CONCURRENCY_CONTEXT, creating and closing contexts stays off the critical
 * path: each worker holds a spare context with its page already open, taken at the start of a job
 * and replaced in the background once the job is done; a used context is closed without the job
 * waiting for it.
 *
 * Browsers are replaced without failing a capture: when Chromium dies, the next job launches a
 * new one; after `recycleAfterCaptures` captures or above `memoryLimitBytes` a browser retires
 * (new jobs go to its successor) and closes once its last capture is done.
 */
export function warmContextConcurrency(hooks: WarmContextHooks = {}) {
  return class WarmContextConcurrency extends ConcurrencyImplementation {
    #current: BrowserEntry | null = null;
    #launching: Promise<BrowserEntry> | null = null;
    #entries = new Set<BrowserEntry>();
    /** Each worker's way to swap a spare that belongs to a retiring browser. */
    #spareRefreshers = new Set<() => void>();
    #closed = false;

    override async init(): Promise<void> {
      await this.#currentEntry();
    }

    override async close(): Promise<void> {
      this.#closed = true;
      await this.#launching?.catch(() => null);
      const entries = [...this.#entries];
      await Promise.all(entries.map((entry) => entry.browser.close().catch(() => killProcessGroup(entry.browser))));
      await Promise.all(entries.map((entry) => entry.exited));
    }

    override async workerInstance(): Promise<WorkerInstance> {
      let spare: Promise<WarmResources> | null = this.#warm();
      spare.catch(() => {});

      const usable = (resources: WarmResources | null): resources is WarmResources =>
        resources !== null && !resources.entry.retiring && resources.entry.browser.connected && !resources.page.isClosed();

      const take = async (): Promise<WarmResources> => {
        const pending = spare ?? this.#warm();
        spare = null;
        const resources = await pending.catch(() => null);
        if (usable(resources)) return resources;
        if (resources) dispose(resources);
        return this.#warm();
      };

      const refresh = () => {
        const pending = spare;
        if (!pending) return;
        spare = pending.then(
          (resources) => {
            if (usable(resources)) return resources;
            dispose(resources);
            return this.#warm();
          },
          () => this.#warm(),
        );
        spare.catch(() => {});
      };
      this.#spareRefreshers.add(refresh);

      return {
        jobInstance: async (): Promise<JobInstance> => {
          const resources = await take();
          const { entry } = resources;
          entry.active += 1;
          entry.captures += 1;
          const recycleAfter = hooks.recycleAfterCaptures ?? 0;
          if (recycleAfter > 0 && entry.captures >= recycleAfter) this.#retire(entry, 'captures');
          return {
            resources,
            // The result does not wait for the used context to close. The next spare is made only now,
            // because making it during the capture slows that capture's navigation down.
            close: async () => {
              dispose(resources);
              entry.active -= 1;
              this.#checkMemory(entry);
              if (entry.retiring && entry.active === 0) this.#shutDown(entry);
              spare = this.#warm();
              spare.catch(() => {});
            },
          };
        },
        close: async () => {
          this.#spareRefreshers.delete(refresh);
          const pending = spare;
          spare = null;
          const resources = await pending?.catch(() => null);
          if (resources) dispose(resources);
        },
        repair: async () => {
          spare = null;
        },
      };
    }

    async #warm(): Promise<WarmResources> {
      const entry = await this.#currentEntry();
      // A capture never writes files: a URL that is a download fails instead (capture-page.ts says why).
      const context = await entry.browser.createBrowserContext({ downloadBehavior: { policy: 'deny' } });
      try {
        const page = await context.newPage();
        await hooks.preparePage?.(page);
        return { context, page, entry };
      } catch (err) {
        void context.close().catch(() => {});
        throw err;
      }
    }

    #currentEntry(): Promise<BrowserEntry> {
      if (this.#closed) return Promise.reject(new Error('the browser pool is closed'));
      const current = this.#current;
      if (current && current.browser.connected && !current.retiring) return Promise.resolve(current);
      this.#launching ??= this.#launch().finally(() => {
        this.#launching = null;
      });
      return this.#launching;
    }

    async #launch(): Promise<BrowserEntry> {
      const puppeteer = this.puppeteer as PuppeteerNode;
      const prepared = await hooks.prepareLaunch?.();
      let browser: Browser;
      try {
        browser = await puppeteer.launch({ ...(this.options as LaunchOptions), ...prepared?.options });
      } catch (err) {
        await prepared?.afterExit();
        throw err;
      }
      let markExited: () => void = () => {};
      const entry: BrowserEntry = {
        browser,
        captures: 0,
        active: 0,
        retiring: false,
        lastMemoryCheck: Number.NEGATIVE_INFINITY,
        exited: new Promise<void>((resolve) => {
          markExited = resolve;
        }),
      };
      browser.once('disconnected', () => {
        if (this.#current === entry) this.#current = null;
        if (!entry.retiring && !this.#closed) {
          hooks.onDisconnect?.(browser);
          // The spares of the other workers died with it; make new ones on the next browser.
          entry.retiring = true;
          this.#refreshSpares();
        }
        void (async () => {
          // A crashed browser may leave its zygote and renderers behind; they all share its group.
          await waitForExit(browser);
          await prepared?.afterExit().catch(() => {});
          this.#entries.delete(entry);
          markExited();
        })();
      });
      this.#entries.add(entry);
      const pid = browser.process()?.pid;
      if (pid !== undefined) await prepared?.onLaunched?.(pid).catch(() => {});
      this.#current = entry;
      hooks.onLaunch?.(browser);
      return entry;
    }

    #retire(entry: BrowserEntry, reason: RecycleReason): void {
      if (entry.retiring || this.#closed) return;
      entry.retiring = true;
      if (this.#current === entry) this.#current = null;
      hooks.onRecycle?.(entry.browser, reason);
      this.#refreshSpares();
      if (entry.active === 0) this.#shutDown(entry);
    }

    #refreshSpares(): void {
      for (const refresh of this.#spareRefreshers) refresh();
    }

    #shutDown(entry: BrowserEntry): void {
      void entry.browser.close().catch(() => killProcessGroup(entry.browser));
    }

    #checkMemory(entry: BrowserEntry): void {
      const limit = hooks.memoryLimitBytes ?? 0;
      const now = performance.now();
      if (limit <= 0 || entry.retiring || now - entry.lastMemoryCheck < MEMORY_CHECK_INTERVAL_MS) return;
      entry.lastMemoryCheck = now;
      const pid = entry.browser.process()?.pid;
      const rss = pid === undefined ? undefined : processTreeRss(pid);
      if (rss !== undefined && rss > limit) this.#retire(entry, 'memory');
    }
  };
}

function dispose(resources: WarmResources): void {
  void resources.context.close().catch(() => {});
}

/** Ends a browser's whole process group (puppeteer starts Chromium as its leader). */
export function killProcessGroup(browser: Browser): void {
  const pid = browser.process()?.pid;
  if (pid !== undefined) killProcessGroupOf(pid);
}

async function waitForExit(browser: Browser): Promise<void> {
  const child = browser.process();
  if (!child) return;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    killProcessGroup(browser);
    await exited;
  } else {
    killProcessGroup(browser);
  }
}
