import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type Koa from 'koa';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { seriousAxeViolations } from '../../../support/axe.ts';
import { hashPassword } from '../../../../lib/passwords.ts';
import { openStore } from '../../../../lib/store/open.ts';
import type { Account, Store } from '../../../../lib/store/store.ts';
import type { User } from '../../../../lib/store/users.ts';
import type { Renderer } from '../../../../services/renderer/src/renderer.ts';
import { createApp } from '../../../../services/api/src/app.ts';
import { lazyResultCache } from '../../../../services/api/src/result-cache/open.ts';
import { sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';
import { createCaptureJobs } from '../../../../services/api/src/captures/service.ts';
import { createNetworkGuard } from '../../../../services/renderer/src/guard/network-guard.ts';
import { createJobRunner } from '../../../../lib/jobs/runner.ts';
import { openMonitorImages } from '../../../../services/api/src/monitors/images.ts';
import { startMonitorService, type MonitorService } from '../../../../services/api/src/monitors/service.ts';

export const EMAIL = 'ada@example.com';
export const PASSWORD = 'correct horse battery';

/**
 * A hosted API on a fresh embedded store with one account and one dashboard user, as
 * `viewfinder accounts create` and `viewfinder users create` leave a real install, with the result
 * cache under its DATA_DIR as main.ts opens it. The clock is the test's: `advance` moves it, for
 * session expiry.
 */
export interface DashboardHarness {
  app: Koa;
  store: Store;
  account: Account;
  user: User;
  /** With `monitors: true`: the page monitors' service the app runs (scheduler, runner, pictures). */
  monitors: MonitorService | undefined;
  /** http://127.0.0.1:port once `listen` has run. */
  origin: string;
  /** Serves the app on 127.0.0.1 (a free port, or the one given) and answers its origin. */
  listen(port?: number): Promise<string>;
  advance(ms: number): void;
  close(): Promise<void>;
}

/**
 * `renderer` replaces the shared test renderer, for a test that needs other renderer settings;
 * `captures` runs asynchronous captures too, `monitors` page monitors (on the same job runner, as main.ts does).
 */
export async function startDashboard(env: Record<string, string> = {}, renderer?: Renderer, options: { captures?: boolean; monitors?: boolean } = {}): Promise<DashboardHarness> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-dashboard-'));
  const config = testConfig({ MODE: 'hosted', DATA_DIR: dataDir, ...env });
  const store = await openStore(config.store);
  const account = await store.createAccount({ name: 'Acme' });
  const user = await store.createUser({ accountId: account.id, email: EMAIL, passwordHash: await hashPassword(PASSWORD) });
  let offsetMs = 0;
  const resultCache = lazyResultCache(config.resultCache);
  const rendering = renderer ?? (await sharedRenderer());
  const captures = options.captures
    ? createCaptureJobs({ store, renderer: rendering, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist), resultCache })
    : undefined;
  const runner = options.monitors ? (captures?.runner ?? createJobRunner({ store, logger: silentLogger, concurrency: 2, leaseMs: 30_000, pollIntervalMs: 50 })) : captures?.runner;
  const monitors = options.monitors && runner
    ? startMonitorService({ store, renderer: rendering, images: await openMonitorImages(config.monitors.images), runner, config: config.monitors, logger: silentLogger })
    : undefined;
  runner?.start();
  const app = createApp({
    config,
    renderer: rendering,
    logger: silentLogger,
    store,
    resultCache,
    clock: () => new Date(Date.now() + offsetMs),
    ...(captures ? { captures } : {}),
    ...(monitors ? { monitors } : {}),
  });
  let server: http.Server | undefined;

  const harness: DashboardHarness = {
    app,
    store,
    account,
    user,
    monitors,
    origin: '',
    async listen(port = 0) {
      server = http.createServer(app.callback());
      await new Promise<void>((resolve) => server?.listen(port, '127.0.0.1', resolve));
      harness.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return harness.origin;
    },
    advance(ms) {
      offsetMs += ms;
    },
    async close() {
      if (server) {
        server.closeAllConnections();
        await new Promise((resolve) => server?.close(resolve));
      }
      monitors?.stop();
      await runner?.stop(1000);
      await monitors?.images.close();
      await resultCache.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

export interface AuditedPage {
  context: BrowserContext;
  page: Page;
  /** The page as it is now has no serious or critical axe violation, and the CSP refused nothing so far. */
  audit(): Promise<void>;
}

/**
 * A page in a browser context of its own (no cookie carries over from one test to the next), whose
 * console is watched for Content Security Policy refusals.
 */
export async function auditedPage(browser: Browser): Promise<AuditedPage> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  // A capture on a loaded machine, or one that waits out the navigation timeout, outlasts puppeteer's 30 s default.
  page.setDefaultTimeout(120_000);
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  const audit = async () => {
    const violations = (await seriousAxeViolations(page)).map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(', ')})`);
    expect(violations, `axe on "${await page.title()}"`).to.deep.equal([]);
    expect(cspViolations, 'CSP violations').to.deep.equal([]);
  };
  return { context, page, audit };
}
