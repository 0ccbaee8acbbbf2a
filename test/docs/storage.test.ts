import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { closedPort, startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { describeOnS3, freshBucket } from '../support/object-store.ts';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';

const root = path.join(import.meta.dirname, '..', '..');
const doc = readFileSync(path.join(root, 'docs', 'storage.md'), 'utf8');
const blocks = [...doc.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({ lang, code: code as string }));
const block = (lang: string, marker: string) => {
  const found = blocks.find((b) => b.lang === lang && b.code.includes(marker));
  if (!found) throw new Error(`docs/storage.md has no ${lang} block with ${marker}`);
  return found.code;
};

/**
 * docs/storage.md's walk-through, run as written against the real API process and a real S3 gateway
 * (versitygw). Only what differs from a reader's machine is replaced: the page is a loopback fixture
 * (no internet here), the object store is versitygw on its own port with a fresh bucket in place of
 * acme-shots, and the service listens on a free port rather than 3000.
 */
describeOnS3('docs/storage.md: a destination registered, a capture delivered and read back, as written', function (s3) {
  this.timeout(180_000);
  let fixtures: FixtureServer;
  let dir: string;
  let api: ServiceProcess | undefined;
  let bucket: Awaited<ReturnType<typeof freshBucket>>;
  let substitute: (code: string) => string;

  before(async () => {
    fixtures = await startFixtureServer();
    bucket = await freshBucket(s3);
    dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-storage-doc-'));
    symlinkSync(path.join(root, 'bin'), path.join(dir, 'bin'));
  });
  after(async () => {
    await api?.stop();
    await fixtures.close();
    await bucket.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a block in bash; asynchronously, since the fixture pages it captures are served by this very process. */
  const bash = (code: string) =>
    new Promise<string>((resolve, reject) => {
      const { MONGODB_URI: _ignored, ...env } = process.env;
      const child = spawn('bash', ['-euo', 'pipefail', '-c', code], {
        cwd: dir,
        env: { ...env, PATH: `${path.dirname(process.execPath)}:${env.PATH}`, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (status) => (status === 0 ? resolve(stdout) : reject(new Error(`${code}\nexited ${status}\n${stdout}\n${stderr}`))));
    });

  it('bootstraps an account, a full-access key and a site with the CLI', async () => {
    await bash(block('sh', 'accounts create'));
    expect(JSON.parse(readFileSync(path.join(dir, 'admin.json'), 'utf8')).kind).to.equal('full');
    expect(JSON.parse(readFileSync(path.join(dir, 'site.json'), 'utf8')).id).to.match(/^site_/);
  });

  it('registers the bucket, captures into it, and reads the image back through the presigned URL; the asynchronous capture lands under its job id', async () => {
    const run = block('sh', 'make run');
    expect(run.trim()).to.equal('MODE=hosted STORAGE_ENDPOINT_ALLOWLIST=127.0.0.1 make run');
    const apiPort = await closedPort();
    api = await startServiceProcess(
      API_MAIN,
      // The doc's page is on the internet; this one is a loopback fixture, which pages may reach only so.
      { MODE: 'hosted', STORAGE_ENDPOINT_ALLOWLIST: '127.0.0.1', PRIVATE_NETWORK_ALLOWLIST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}` },
      { port: apiPort },
    );
    substitute = (code) =>
      code
        .replaceAll('https://example.com', fixtures.url('/geometry'))
        .replaceAll('http://localhost:3000', api!.base)
        .replaceAll('http://127.0.0.1:9000', s3.endpoint)
        .replaceAll('acme-shots', bucket.options.bucket);
    const env = substitute(block('sh', 'export VIEWFINDER'));

    const registered = JSON.parse(await bash(`${env}\n${substitute(block('sh', '/api/destinations'))}`));
    expect(registered).to.deep.include({ name: 'archive', endpoint: s3.endpoint, bucket: bucket.options.bucket, pathStyle: true, keyTemplate: 'shots/{date}/{id}.{format}', hasCredentials: true });
    expect(JSON.stringify(registered)).to.not.include(s3.secretAccessKey);

    const key = (await bash(`${env}\n${substitute(block('sh', '"presign": 3600'))}`)).trim();
    expect(key).to.match(new RegExp(`^shots/${new Date().toISOString().slice(0, 10)}/cap_[0-9a-f]{24}\\.png$`));
    const stored = JSON.parse(readFileSync(path.join(dir, 'stored.json'), 'utf8'));
    expect(stored).to.not.have.property('image');
    expect(Object.keys(stored.storage)).to.have.members(['destination', 'bucket', 'key', 'url', 'etag', 'presignedUrl', 'presignedUrlExpiresAt']);
    expect(PNG.sync.read(readFileSync(path.join(dir, 'shot.png'))).width).to.equal(1280);

    const asynchronous = (await bash(`${env}\n${substitute(block('sh', 'until curl'))}`)).trim();
    expect(asynchronous).to.match(/^succeeded: shots\/\d{4}-\d{2}-\d{2}\/job_[0-9a-f]{24}\.png$/);
    expect(api.output()).to.not.include(s3.secretAccessKey);
  });
});

/** The Self-hosted mode section as written: the destinations from STORAGE_DESTINATIONS, a capture into the bucket read back. */
describeOnS3('docs/storage.md: self-hosted mode, destinations from STORAGE_DESTINATIONS, as written', function (s3) {
  this.timeout(120_000);
  let fixtures: FixtureServer;
  let dir: string;
  let api: ServiceProcess | undefined;
  let bucket: Awaited<ReturnType<typeof freshBucket>>;

  before(async () => {
    fixtures = await startFixtureServer();
    bucket = await freshBucket(s3);
    dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-storage-doc-self-'));
  });
  after(async () => {
    await api?.stop();
    await fixtures.close();
    await bucket.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const awsEnv = () => ({ AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey });
  const bash = (code: string) =>
    new Promise<string>((resolve, reject) => {
      const { MONGODB_URI: _ignored, ...env } = process.env;
      const child = spawn('bash', ['-euo', 'pipefail', '-c', code], { cwd: dir, env: { ...env, PATH: `${path.dirname(process.execPath)}:${env.PATH}`, ...awsEnv() } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (status) => (status === 0 ? resolve(stdout) : reject(new Error(`${code}\nexited ${status}\n${stdout}\n${stderr}`))));
    });

  it('starts the service with the list the doc exports, captures into the bucket, and reads the image back through the presigned URL', async () => {
    const start = block('sh', 'export STORAGE_DESTINATIONS');
    const lines = start.trim().split('\n');
    expect(lines.at(-1)).to.equal('STORAGE_ENDPOINT_ALLOWLIST=127.0.0.1 make run');
    const substitute = (code: string) => code.replaceAll('http://127.0.0.1:9000', s3.endpoint).replaceAll('acme-shots', bucket.options.bucket).replaceAll('https://example.com', fixtures.url('/geometry'));
    // The export as written (its JSON, with the endpoint and bucket of this run), read back from bash.
    const destinations = await bash(`${substitute(lines.slice(0, -1).join('\n'))}\nprintf %s "$STORAGE_DESTINATIONS"`);
    const apiPort = await closedPort();
    api = await startServiceProcess(
      API_MAIN,
      { STORAGE_DESTINATIONS: destinations, STORAGE_ENDPOINT_ALLOWLIST: '127.0.0.1', PRIVATE_NETWORK_ALLOWLIST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), ...awsEnv() },
      { port: apiPort },
    );
    const capture = substitute(block('sh', 'localhost:3000/screenshot')).replaceAll('http://localhost:3000', api.base);
    const key = (await bash(capture)).trim();
    expect(key).to.match(new RegExp(`^shots/${new Date().toISOString().slice(0, 10)}/cap_[0-9a-f]{24}\\.png$`));
    const stored = JSON.parse(readFileSync(path.join(dir, 'stored.json'), 'utf8'));
    expect(stored).to.not.have.property('image');
    expect(stored.storage).to.include({ destination: 'archive', bucket: bucket.options.bucket, key });
    expect(PNG.sync.read(readFileSync(path.join(dir, 'shot.png'))).width).to.equal(1280);
    expect(api.output()).to.not.include(s3.secretAccessKey);
  });
});
