import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Koa from 'koa';
import request from 'supertest';
import type { Logger } from '../../../../lib/logger.ts';
import { openStore } from '../../../../lib/store/open.ts';
import type { Account, Store } from '../../../../lib/store/store.ts';
import { createJobRunner } from '../../../../lib/jobs/runner.ts';
import { createApp } from '../../../../services/api/src/app.ts';
import type { ResultCache } from '../../../../services/api/src/result-cache/result-cache.ts';
import { openMonitorImages } from '../../../../services/api/src/monitors/images.ts';
import { startMonitorService, type MonitorService } from '../../../../services/api/src/monitors/service.ts';
import type { TokenReviewer } from '../../../../services/api/src/auth/operator-token.ts';
import type { Renderer } from '../../../../services/renderer/src/renderer.ts';
import { sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';
import { createCaptureJobs, type CaptureJobs } from '../../../../services/api/src/captures/service.ts';
import { createNetworkGuard, type Lookup } from '../../../../services/renderer/src/guard/network-guard.ts';
import { createStorageDelivery } from '../../../../services/api/src/storage/delivery.ts';

/**
 * A hosted app on a fresh embedded store in a temp DATA_DIR (or the given one), with one account and its full-access
 * key, exactly as `viewfinder accounts create` bootstraps a real install. It captures on the shared in-process pool
 * unless given another renderer (a remote one, say).
 */
export interface HostedHarness {
  app: Koa;
  store: Store;
  dataDir: string;
  account: Account;
  /** The account's full-access key, in plaintext. */
  fullKey: string;
  /** With `monitors: true`: the monitor service the app runs (its scheduler, runner and pictures). */
  monitors: MonitorService | undefined;
  /** Supertest against the app with a key (none when undefined). */
  api(key?: string): {
    get(url: string): request.Test;
    post(url: string, body?: object): request.Test;
    patch(url: string, body: object): request.Test;
    delete(url: string): request.Test;
  };
  /** With `captures`: asynchronous captures on a started job runner. */
  captures?: CaptureJobs;
  close(): Promise<void>;
}

export async function startHosted(
  options: { env?: Record<string, string>; logger?: Logger; dataDir?: string; renderer?: Renderer; resultCache?: ResultCache; tokenReviewer?: TokenReviewer; captures?: boolean; lookup?: Lookup; monitors?: boolean } = {},
): Promise<HostedHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'viewfinder-hosted-'));
  const config = testConfig({ MODE: 'hosted', DATA_DIR: dataDir, ...options.env });
  const store = await openStore(config.store);
  const account = await store.createAccount({ name: 'Acme' });
  const { secret: fullKey } = await store.createKey({ accountId: account.id, name: 'admin', kind: 'full' });
  const renderer = options.renderer ?? (await sharedRenderer());
  const logger = options.logger ?? silentLogger;
  const storage = createStorageDelivery(store, config.storage, options.lookup);
  const captures = options.captures
    ? createCaptureJobs({ store, renderer, config: config.captures, logger, guard: createNetworkGuard(config.renderer.networkAllowlist, options.lookup), storage })
    : undefined;
  const runner = options.monitors ? (captures?.runner ?? createJobRunner({ store, logger, concurrency: 2, leaseMs: 30_000, pollIntervalMs: 50 })) : captures?.runner;
  const monitors = options.monitors && runner
    ? startMonitorService({ store, renderer, images: await openMonitorImages(config.monitors.images), runner, config: config.monitors, logger })
    : undefined;
  runner?.start();
  const app = createApp({
    config,
    renderer,
    logger,
    store,
    storage,
    ...(options.resultCache ? { resultCache: options.resultCache } : {}),
    ...(captures ? { captures } : {}),
    ...(monitors ? { monitors } : {}),
    ...(options.tokenReviewer ? { tokenReviewer: options.tokenReviewer } : {}),
  });

  const api = (key?: string) => {
    const withKey = (test: request.Test) => (key === undefined ? test : test.set('X-API-Key', key));
    const agent = request(app.callback());
    return {
      get: (url: string) => withKey(agent.get(url)),
      post: (url: string, body?: object) => {
        const test = withKey(agent.post(url));
        return body === undefined ? test : test.set('Content-Type', 'application/json').send(body);
      },
      patch: (url: string, body: object) => withKey(agent.patch(url)).set('Content-Type', 'application/json').send(body),
      delete: (url: string) => withKey(agent.delete(url)),
    };
  };

  return {
    app,
    store,
    dataDir,
    account,
    fullKey,
    monitors,
    api,
    ...(captures ? { captures } : {}),
    async close() {
      monitors?.stop();
      await runner?.stop(1000);
      await store.close();
      // A directory the caller passed in is the caller's to remove.
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
