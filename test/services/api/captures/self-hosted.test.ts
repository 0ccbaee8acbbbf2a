import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { openSqliteStore } from '../../../../lib/store/sqlite.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { verifySignature } from '../../../../lib/webhook-signature.ts';
import { createApp } from '../../../../services/api/src/app.ts';
import { createCaptureJobs, type CaptureJobs } from '../../../../services/api/src/captures/service.ts';
import { createNetworkGuard } from '../../../../services/renderer/src/guard/network-guard.ts';
import { eventually } from '../../../support/eventually.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { decodeDataUri, sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../support/webhook-receiver.ts';

describe('asynchronous captures, self-hosted (POST /captures behind API_KEY, real Chromium)', function () {
  this.timeout(60_000);
  const SIGNING = 'a'.repeat(16) + 'b'.repeat(16);
  let fixtures: FixtureServer;
  let receiver: WebhookReceiver;
  let dataDir: string;
  let store: Store;
  let captures: CaptureJobs | undefined;

  before(async () => {
    fixtures = await startFixtureServer();
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await fixtures.close();
    await receiver.close();
  });
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-self-async-'));
    store = openSqliteStore({ dataDir });
  });
  afterEach(async () => {
    await captures?.runner.stop(1000);
    captures = undefined;
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const appWith = async (env: Record<string, string>, withCaptures = true) => {
    const config = testConfig({ API_KEY: 'self-hosted-key', DATA_DIR: dataDir, JOB_POLL_INTERVAL_MS: '50', ...env });
    const renderer = await sharedRenderer();
    if (withCaptures) {
      captures = createCaptureJobs({ store, renderer, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist) });
      captures.runner.start();
    }
    return request(createApp({ config, renderer, logger: silentLogger, ...(captures ? { captures } : {}) }).callback());
  };

  it('queues behind API_KEY, captures, and signs the webhook with WEBHOOK_SIGNING_SECRET', async () => {
    const api = await appWith({ WEBHOOK_SIGNING_SECRET: SIGNING });
    const body = { url: fixtures.url('/geometry'), webhookUrl: receiver.url };
    expect((await api.post('/captures').send(body)).status).to.equal(401);
    const response = await api.post('/captures').set('X-API-Key', 'self-hosted-key').send(body);
    expect(response.status, JSON.stringify(response.body)).to.equal(202);
    expect(response.body.statusUrl).to.match(new RegExp(`/captures/${response.body.id}$`));
    expect(response.headers.location).to.equal(response.body.statusUrl);
    await eventually('the webhook arrives', () => receiver.deliveries.length === 1, 30_000);
    const delivery = receiver.deliveries[0]!;
    expect(verifySignature(SIGNING, delivery.headers['viewfinder-signature'] as string, delivery.body)).to.equal(true);
    expect(JSON.parse(delivery.body)).to.deep.include({ id: response.body.id, status: 'succeeded' });

    expect((await api.get(`/captures/${response.body.id}`)).status).to.equal(401);
    const status = await api.get(`/captures/${response.body.id}`).set('X-API-Key', 'self-hosted-key');
    expect(status.body).to.deep.include({ status: 'succeeded', attempts: 1 });
    expect(status.body.result).to.not.have.property('site_id');
    expect(decodeDataUri(status.body.result.image).png.width).to.equal(1280);
  });

  it('refuses a webhookUrl with 409 when WEBHOOK_SIGNING_SECRET is not set, and queues nothing', async () => {
    const api = await appWith({});
    const response = await api.post('/captures').set('X-API-Key', 'self-hosted-key').send({ url: fixtures.url('/geometry'), webhookUrl: receiver.url });
    expect(response.status).to.equal(409);
    expect(response.body.error).to.equal('webhookUrl needs WEBHOOK_SIGNING_SECRET to be set on the service, so that deliveries are signed');
    expect(await store.countJobs({ states: ['queued', 'running', 'succeeded', 'failed'] })).to.equal(0);
  });

  it('answers 503 with a JSON error when the service runs without asynchronous captures', async () => {
    const api = await appWith({}, false);
    const response = await api.post('/captures').set('X-API-Key', 'self-hosted-key').send({ url: fixtures.url('/geometry') });
    expect(response.status).to.equal(503);
    expect(response.body.success).to.equal(false);
  });
});
