import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { openSqliteStore } from '../../../../lib/store/sqlite.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { createApp } from '../../../../services/api/src/app.ts';
import { createCaptureJobs } from '../../../../services/api/src/captures/service.ts';
import { createNetworkGuard } from '../../../../services/renderer/src/guard/network-guard.ts';
import { sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';

/** Self-hosted mode has no accounts to register destinations to: `storage` is a 400 that says so (docs/storage.md). */
describe('the storage option in self-hosted mode', () => {
  const NEEDS_HOSTED = 'storage needs MODE=hosted: captures are written to storage destinations registered to an account (POST /api/destinations), and self-hosted mode has no accounts';
  let dataDir: string;
  let store: Store;
  before(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-storage-self-'));
    store = openSqliteStore({ dataDir });
  });
  after(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const route of ['/screenshot', '/captures']) {
    it(`POST ${route} answers 400 naming why, before anything renders or is queued`, async () => {
      const config = testConfig();
      const renderer = await sharedRenderer();
      const captures = createCaptureJobs({ store, renderer, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist) });
      const app = createApp({ config, renderer, logger: silentLogger, captures });
      const answer = await request(app.callback()).post(route).set('Content-Type', 'application/json').send({ url: 'http://127.0.0.1:9/', storage: { destination: 'archive' } });
      expect(answer.status).to.equal(400);
      expect(answer.body).to.deep.equal({ success: false, error: NEEDS_HOSTED });
      expect(await store.countJobs({ type: 'capture', states: ['queued', 'running'] })).to.equal(0);
    });
  }
});
