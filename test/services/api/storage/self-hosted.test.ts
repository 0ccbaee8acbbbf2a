import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import request from 'supertest';
import { openS3BlobStore } from '../../../../lib/blobs/s3-blob-store.ts';
import { ConfigError } from '../../../../lib/env.ts';
import { openSqliteStore } from '../../../../lib/store/sqlite.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { createApp } from '../../../../services/api/src/app.ts';
import { createCaptureJobs, type CaptureJobs } from '../../../../services/api/src/captures/service.ts';
import { loadStorageConfig } from '../../../../services/api/src/storage/config.ts';
import { selfHostedStorageDelivery } from '../../../../services/api/src/storage/configured-destinations.ts';
import { createNetworkGuard } from '../../../../services/renderer/src/guard/network-guard.ts';
import { eventually } from '../../../support/eventually.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { sharedRenderer, silentLogger, testConfig } from '../../../support/harness.ts';
import { describeOnS3, freshBucket } from '../../../support/object-store.ts';
import { startSecretServer, type SecretServer } from '../../../support/secret-server.ts';

/**
 * Self-hosted mode has no accounts: its destinations come from STORAGE_DESTINATIONS (docs/storage.md,
 * "Self-hosted mode"), and POST /screenshot and POST /captures write to them with the hosted delivery.
 */
const KEYS = { accessKeyId: 'AKIASELFHOSTED000001', secretAccessKey: 'self-hosted-secret/+=0123456789' };
const entry = (overrides: Record<string, unknown> = {}) => ({ name: 'archive', endpoint: 'https://s3.eu-west-1.amazonaws.com/', bucket: 'acme-shots', credentials: KEYS, ...overrides });
const load = (env: Record<string, string>) => loadStorageConfig(env);
const refusal = (env: Record<string, string>) => {
  try {
    load(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('loaded');
};

describe('STORAGE_DESTINATIONS: self-hosted storage destinations from the configuration', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-storage-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a JSON list with the management API\'s defaults, or the file a path names; none when unset', () => {
    expect(load({}).destinations).to.deep.equal([]);
    const [configured] = load({ STORAGE_DESTINATIONS: JSON.stringify([entry()]) }).destinations;
    expect(configured?.destination).to.deep.include({ name: 'archive', endpoint: 'https://s3.eu-west-1.amazonaws.com', bucket: 'acme-shots', region: 'us-east-1', pathStyle: false, keyTemplate: '{id}.{format}', managedBy: null });
    expect(configured?.credentials).to.deep.equal(KEYS);
    const file = path.join(dir, 'destinations.json');
    writeFileSync(file, JSON.stringify([entry({ name: 'shots', pathStyle: true, region: 'eu-west-1', keyTemplate: 'shots/{date}/{id}.{format}' })]));
    expect(load({ STORAGE_DESTINATIONS: file }).destinations[0]?.destination).to.deep.include({ name: 'shots', pathStyle: true, region: 'eu-west-1', keyTemplate: 'shots/{date}/{id}.{format}' });
  });

  it('reads a credential from the variable {"env": NAME} names', () => {
    const list = [entry({ credentials: { accessKeyId: { env: 'SHOTS_KEY_ID' }, secretAccessKey: { env: 'SHOTS_SECRET' } } })];
    const [configured] = load({ STORAGE_DESTINATIONS: JSON.stringify(list), SHOTS_KEY_ID: KEYS.accessKeyId, SHOTS_SECRET: KEYS.secretAccessKey }).destinations;
    expect(configured?.credentials).to.deep.equal(KEYS);
    expect(refusal({ STORAGE_DESTINATIONS: JSON.stringify(list), SHOTS_KEY_ID: KEYS.accessKeyId })).to.equal('STORAGE_DESTINATIONS[0]: credentials.secretAccessKey is read from SHOTS_SECRET, which is not set');
  });

  it('refuses what the management API refuses, naming the entry and never a credential', () => {
    const messages = [
      refusal({ STORAGE_DESTINATIONS: `[${JSON.stringify(entry())}` }),
      refusal({ STORAGE_DESTINATIONS: JSON.stringify(entry()) }),
      refusal({ STORAGE_DESTINATIONS: JSON.stringify([entry(), entry({ name: 'Bad Name' })]) }),
      refusal({ STORAGE_DESTINATIONS: JSON.stringify([entry({ keyTemplate: '../{id}' })]) }),
      refusal({ STORAGE_DESTINATIONS: JSON.stringify([entry(), entry({ bucket: 'other' })]) }),
      refusal({ STORAGE_DESTINATIONS: path.join(dir, 'missing.json') }),
    ];
    expect(messages[0]).to.match(/^STORAGE_DESTINATIONS is not JSON: /);
    expect(messages[1]).to.equal('STORAGE_DESTINATIONS must be a JSON list of destinations');
    expect(messages[2]).to.match(/^STORAGE_DESTINATIONS\[1\]: name must be lower-case letters/);
    expect(messages[3]).to.match(/^STORAGE_DESTINATIONS\[0\]: keyTemplate /);
    expect(messages[4]).to.equal('STORAGE_DESTINATIONS[1]: a second destination named archive; names are unique');
    expect(messages[5]).to.equal(`STORAGE_DESTINATIONS names the file ${path.join(dir, 'missing.json')}, which cannot be read: ENOENT`);
    for (const message of messages) expect(message).to.not.include(KEYS.secretAccessKey);
  });

  it('is refused in hosted mode, where destinations belong to accounts', () => {
    expect(() => testConfig({ MODE: 'hosted', STORAGE_DESTINATIONS: JSON.stringify([entry()]) })).to.throw(ConfigError, /^STORAGE_DESTINATIONS is for self-hosted mode/);
  });
});

describe('the storage option in self-hosted mode', function () {
  this.timeout(60_000);
  const NOT_CONFIGURED = 'storage needs a destination: in self-hosted mode they are configured with STORAGE_DESTINATIONS, which is not set (docs/storage.md#self-hosted-mode)';
  let dataDir: string;
  let store: Store;
  let secret: SecretServer;
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-storage-self-'));
    store = openSqliteStore({ dataDir });
    secret = await startSecretServer();
  });
  after(async () => {
    await store.close();
    await secret.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const appWith = async (env: Record<string, string>) => {
    const config = testConfig(env);
    const renderer = await sharedRenderer();
    const storage = selfHostedStorageDelivery(config.storage);
    const captures = createCaptureJobs({ store, renderer, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist), ...(storage ? { storage } : {}) });
    return request(createApp({ config, renderer, logger: silentLogger, captures, ...(storage ? { storage } : {}) }).callback());
  };

  for (const route of ['/screenshot', '/captures']) {
    it(`POST ${route} without STORAGE_DESTINATIONS answers 400 naming it, before anything renders or is queued`, async () => {
      const api = await appWith({});
      const answer = await api.post(route).send({ url: 'http://127.0.0.1:9/', storage: { destination: 'archive' } });
      expect(answer.status).to.equal(400);
      expect(answer.body).to.deep.equal({ success: false, error: NOT_CONFIGURED });
      expect(await store.countJobs({ type: 'capture', states: ['queued', 'running'] })).to.equal(0);
    });

    it(`POST ${route} answers 400 to a destination that is not configured, naming those that are`, async () => {
      const api = await appWith({ STORAGE_DESTINATIONS: JSON.stringify([entry({ endpoint: 'http://8.8.8.8:9000' })]) });
      const answer = await api.post(route).send({ url: 'http://127.0.0.1:9/', storage: { destination: 'missing' } });
      expect(answer.body).to.deep.equal({ success: false, error: 'storage.destination: no storage destination named missing is configured (STORAGE_DESTINATIONS names archive)' });
    });

    it(`POST ${route} refuses (403) a configured endpoint the guard refuses, sending it nothing`, async () => {
      const api = await appWith({ STORAGE_DESTINATIONS: JSON.stringify([entry({ endpoint: `http://127.0.0.1:${secret.port}`, pathStyle: true })]) });
      secret.reset();
      const answer = await api.post(route).send({ url: 'http://127.0.0.1:9/', storage: { destination: 'archive' } });
      expect(answer.status).to.equal(403);
      expect(answer.body.error).to.match(/^storage endpoint refused: .*loopback/);
      expect(secret.hits()).to.equal(0);
    });
  }

  it('POST /screenshot with storage and an Accept that allows only the image is a 406', async () => {
    const api = await appWith({ STORAGE_DESTINATIONS: JSON.stringify([entry({ endpoint: 'http://8.8.8.8:9000' })]) });
    const answer = await api.post('/screenshot').set('Accept', 'image/png').send({ url: 'http://127.0.0.1:9/', storage: { destination: 'archive' } });
    expect(answer.status).to.equal(406);
  });
});

describeOnS3('self-hosted captures written to a configured destination (versitygw, real Chromium)', function (s3) {
  this.timeout(90_000);
  let fixtures: FixtureServer;
  let bucket: Awaited<ReturnType<typeof freshBucket>>;
  let dataDir: string;
  let store: Store;
  let captures: CaptureJobs | undefined;
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(() => fixtures.close());
  beforeEach(async () => {
    bucket = await freshBucket(s3);
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-storage-self-s3-'));
    store = openSqliteStore({ dataDir });
  });
  afterEach(async () => {
    await captures?.runner.stop(1000);
    captures = undefined;
    await store.close();
    await bucket.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const appWith = async () => {
    const config = testConfig({
      API_KEY: 'self-hosted-key',
      DATA_DIR: dataDir,
      JOB_POLL_INTERVAL_MS: '50',
      STORAGE_ENDPOINT_ALLOWLIST: new URL(s3.endpoint).hostname,
      SHOTS_SECRET: s3.secretAccessKey,
      STORAGE_DESTINATIONS: JSON.stringify([
        {
          name: 'archive',
          endpoint: s3.endpoint,
          bucket: bucket.options.bucket,
          region: s3.region,
          pathStyle: true,
          keyTemplate: 'shots/{date}/{id}.{format}',
          credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: { env: 'SHOTS_SECRET' } },
        },
      ]),
    });
    const renderer = await sharedRenderer();
    const storage = selfHostedStorageDelivery(config.storage)!;
    captures = createCaptureJobs({ store, renderer, config: config.captures, logger: silentLogger, guard: createNetworkGuard(config.renderer.networkAllowlist), storage });
    captures.runner.start();
    return request(createApp({ config, renderer, logger: silentLogger, captures, storage }).callback());
  };
  const objects = () => openS3BlobStore(bucket.options);

  it('POST /screenshot writes the PNG to the bucket and answers where it is, with a presigned URL that reads it back', async () => {
    const api = await appWith();
    const answer = await api.post('/screenshot').set('X-API-Key', 'self-hosted-key').send({ url: fixtures.url('/geometry'), storage: { destination: 'archive', presign: 300 } });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body).to.not.have.property('image');
    expect(answer.body).to.deep.include({ success: true, url: fixtures.url('/geometry'), width: 1280, height: 720 });
    const { storage } = answer.body;
    expect(storage.key).to.match(new RegExp(`^shots/${new Date().toISOString().slice(0, 10)}/cap_[0-9a-f]{24}\\.png$`));
    expect(storage).to.deep.include({ destination: 'archive', bucket: bucket.options.bucket, url: `${s3.endpoint}/${bucket.options.bucket}/${storage.key}` });
    const object = (await (await objects()).getBuffer(storage.key))!;
    expect(object.info.contentType).to.equal('image/png');
    expect(PNG.sync.read(object.bytes).width).to.equal(1280);
    const read = await fetch(storage.presignedUrl);
    expect(read.status).to.equal(200);
    expect(Buffer.from(await read.arrayBuffer()).equals(object.bytes)).to.equal(true);
    expect(JSON.stringify(answer.body)).to.not.include(s3.secretAccessKey);
  });

  it('POST /captures writes the job\'s capture under its id; the status names the object and keeps no image', async () => {
    const api = await appWith();
    const submitted = await api.post('/captures').set('X-API-Key', 'self-hosted-key').send({ url: fixtures.url('/geometry'), storage: { destination: 'archive' } });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    const id = submitted.body.id as string;
    let status: request.Response | undefined;
    await eventually(
      'the capture finishes',
      async () => {
        status = await api.get(`/captures/${id}`).set('X-API-Key', 'self-hosted-key');
        return !['queued', 'running'].includes(status.body.status);
      },
      60_000,
    );
    expect(status!.body.status, JSON.stringify(status!.body)).to.equal('succeeded');
    const stored = status!.body.result.storage;
    expect(stored.key).to.match(new RegExp(`^shots/\\d{4}-\\d{2}-\\d{2}/${id}\\.png$`));
    expect((await (await objects()).getBuffer(stored.key))?.info.contentType).to.equal('image/png');
    expect((await api.get(`/captures/${id}`).set('X-API-Key', 'self-hosted-key').set('Accept', 'image/png')).status).to.equal(409);
  });
});
