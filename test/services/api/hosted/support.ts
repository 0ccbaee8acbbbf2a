import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Koa from 'koa';
import request from 'supertest';
import type { Logger } from '../../../../lib/logger.ts';
import { openStore } from '../../../../lib/store/open.ts';
import type { Account, Store } from '../../../../lib/store/store.ts';
import { createApp } from '../../../../services/api/src/app.ts';
import type { TokenReviewer } from '../../../../services/api/src/auth/operator-token.ts';
import type { Renderer } from '../../../../services/renderer/src/renderer.ts';
import { sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';

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
  /** Supertest against the app with a key (none when undefined). */
  api(key?: string): {
    get(url: string): request.Test;
    post(url: string, body?: object): request.Test;
    patch(url: string, body: object): request.Test;
    delete(url: string): request.Test;
  };
  close(): Promise<void>;
}

export async function startHosted(
  options: { env?: Record<string, string>; logger?: Logger; dataDir?: string; renderer?: Renderer; tokenReviewer?: TokenReviewer } = {},
): Promise<HostedHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'viewfinder-hosted-'));
  const config = testConfig({ MODE: 'hosted', DATA_DIR: dataDir, ...options.env });
  const store = await openStore(config.store);
  const account = await store.createAccount({ name: 'Acme' });
  const { secret: fullKey } = await store.createKey({ accountId: account.id, name: 'admin', kind: 'full' });
  const app = createApp({
    config,
    renderer: options.renderer ?? (await sharedRenderer()),
    logger: options.logger ?? silentLogger,
    store,
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
    api,
    async close() {
      await store.close();
      // A directory the caller passed in is the caller's to remove.
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
