import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { openSqliteStore } from '../../lib/store/sqlite.ts';
import { startHosted } from '../services/api/hosted/support.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { VIEWFINDER_BIN as BIN, viewfinder } from '../support/viewfinder-cli.ts';

const LOCAL_NODE = fileURLToPath(new URL('../../tools/node/node_modules/node/bin/node', import.meta.url));

describe('bin/viewfinder (admin CLI, run as a process on the embedded store)', () => {
  let dataDir: string;
  const run = (...args: string[]) => viewfinder(dataDir, args);
  const ok = async (...args: string[]) => {
    const result = await run(...args);
    expect(result.code, result.stderr).to.equal(0);
    return result;
  };

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-cli-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('bootstraps an account and a full-access key that the API then accepts', async () => {
    const created = await ok('accounts', 'create', 'Acme');
    expect(created.json.account).to.include({ name: 'Acme', rateLimitPerMinute: null });
    expect(created.json.key).to.include({ name: 'admin', kind: 'full' });
    expect(created.json.key.key).to.match(/^vf_[A-Za-z0-9_-]{43}$/);
    expect(created.json.key.signingSecret).to.match(/^vfs_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).to.match(/shown only once/);

    // The API on the same DATA_DIR accepts the key.
    const hosted = await startHosted({ dataDir });
    try {
      const sites = await hosted.api(created.json.key.key).get('/api/sites');
      expect(sites.status).to.equal(200);
    } finally {
      await hosted.close();
    }
  });

  it('lists accounts and sets a per-account rate limit', async () => {
    const { json } = await ok('accounts', 'create', 'Acme', '--rate-limit', '30');
    expect(json.account.rateLimitPerMinute).to.equal(30);
    const listed = await ok('accounts', 'list');
    expect(listed.json.accounts.map((a: { id: string }) => a.id)).to.deep.equal([json.account.id]);
    expect((await ok('accounts', 'set-rate-limit', json.account.id, '5')).json.rateLimitPerMinute).to.equal(5);
    expect((await ok('accounts', 'set-rate-limit', json.account.id, 'default')).json.rateLimitPerMinute).to.equal(null);
    const invalid = await run('accounts', 'set-rate-limit', json.account.id, 'lots');
    expect(invalid.code).to.not.equal(0);
    expect(invalid.stderr).to.match(/must be a positive integer/);
  });

  it('manages sites: create, list, get, set-domains, delete, with the API’s validation', async () => {
    const account = (await ok('accounts', 'create', 'Acme')).json.account.id as string;
    const site = (await ok('sites', 'create', '-a', account, '-d', '*.Example.com,bücher.de', '-n', 'Shop')).json;
    expect(site).to.include({ name: 'Shop' });
    expect(site.allowedDomains).to.deep.equal(['example.com', 'xn--bcher-kva.de']);
    expect((await ok('sites', 'list', '-a', account)).json).to.deep.equal([site]);
    expect((await ok('sites', 'get', site.id, '-a', account)).json.id).to.equal(site.id);
    expect((await ok('sites', 'set-domains', site.id, '-a', account, '-d', 'other.org')).json.allowedDomains).to.deep.equal(['other.org']);
    expect((await ok('sites', 'set-domains', site.id, '-a', account, '-d', '')).json.allowedDomains).to.deep.equal([]);

    const invalid = await run('sites', 'create', '-a', account, '-d', 'https://example.com/path');
    expect(invalid.code).to.equal(1);
    expect(invalid.stderr).to.match(/^viewfinder: allowedDomains: "https:\/\/example.com\/path" is not a host name/);

    expect((await ok('sites', 'delete', site.id, '-a', account)).json).to.deep.equal({ deleted: site.id });
    const gone = await run('sites', 'get', site.id, '-a', account);
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.match(/Site .* not found/);
  });

  it('manages keys: create (printed once), list without secrets, regenerate, delete', async () => {
    const account = (await ok('accounts', 'create', 'Acme')).json.account.id as string;
    const site = (await ok('sites', 'create', '-a', account, '-d', 'example.com')).json;
    const key = (await ok('keys', 'create', '-a', account, '-n', 'widget', '-s', site.id, '--restrict-domains')).json;
    expect(key).to.include({ name: 'widget', kind: 'site', siteId: site.id, restrictDomains: true });
    expect(key.key).to.match(/^vf_/);
    expect(key.signingSecret).to.match(/^vfs_/);

    const listed = await ok('keys', 'list', '-a', account);
    expect(listed.json.map((k: { name: string }) => k.name)).to.deep.equal(['admin', 'widget']);
    expect(listed.stdout).to.not.include(key.key.slice(11));
    expect(listed.stdout).to.not.include(key.signingSecret.slice(4));

    const regenerated = (await ok('keys', 'regenerate', key.id, '-a', account)).json;
    expect(regenerated.id).to.equal(key.id);
    expect(regenerated.key).to.not.equal(key.key);
    expect(regenerated.signingSecret).to.match(/^vfs_/).and.not.equal(key.signingSecret);
    expect((await ok('keys', 'delete', key.id, '-a', account)).json).to.deep.equal({ deleted: key.id });
    expect((await ok('keys', 'list', '-a', account)).json.map((k: { name: string }) => k.name)).to.deep.equal(['admin']);
  });

  it('signs a render link with the signing secret from the environment, which the API then answers', async () => {
    const account = (await ok('accounts', 'create', 'Acme')).json.account.id as string;
    const site = (await ok('sites', 'create', '-a', account, '-d', '127.0.0.1')).json;
    const key = (await ok('keys', 'create', '-a', account, '-n', 'links', '-s', site.id)).json;
    expect(key.unsignedLinks).to.equal(false);
    const open = (await ok('keys', 'create', '-a', account, '-n', 'open', '-s', site.id, '--unsigned-links')).json;
    expect(open.unsignedLinks).to.equal(true);

    const fixtures = await startFixtureServer();
    const hosted = await startHosted({ dataDir });
    try {
      const args = ['links', 'sign', '--origin', 'http://viewfinder.test', '-k', key.id, '-u', fixtures.url('/geometry'), '-o', 'quality=mobile', '--expires-in', '600'];
      const signed = await viewfinder(dataDir, args, undefined, { VIEWFINDER_SIGNING_SECRET: key.signingSecret });
      expect(signed.code, signed.stderr).to.equal(0);
      expect(signed.json.link).to.match(/^http:\/\/viewfinder\.test\/api\/render\?url=.*&quality=mobile&key=key_\w+&expires=\d+&signature=[0-9a-f]{64}$/);
      expect(Date.parse(signed.json.expires) - Date.now()).to.be.within(590_000, 600_000);
      const response = await hosted.api().get(signed.json.link.slice('http://viewfinder.test'.length));
      expect(response.status, response.text).to.equal(200);
      expect(response.headers['content-type']).to.equal('image/png');
      expect(response.headers['viewfinder-width']).to.equal('750');

      const wrongSecret = await viewfinder(dataDir, args, undefined, { VIEWFINDER_SIGNING_SECRET: open.signingSecret });
      expect((await hosted.api().get(wrongSecret.json.link.slice('http://viewfinder.test'.length))).status).to.equal(401);
    } finally {
      await hosted.close();
      await fixtures.close();
    }

    const missing = await run('links', 'sign', '--origin', 'http://viewfinder.test', '-k', key.id, '-u', 'https://example.com');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/Set VIEWFINDER_SIGNING_SECRET/);
    const badOption = await run('links', 'sign', '--origin', 'http://viewfinder.test', '-k', key.id, '-u', 'https://example.com', '-o', 'fullPage');
    expect(badOption.code).to.not.equal(0);
    expect(badOption.stderr).to.match(/must be name=value/);
  });

  it('shows usage per site, per key and per page monitor', async () => {
    const account = (await ok('accounts', 'create', 'Acme')).json.account.id as string;
    expect((await ok('usage', '-a', account)).json).to.deep.equal({ sites: {}, keys: {}, monitors: {} });
  });

  it('refuses to change an object the operator owns, naming the resource, with exit code 1', async () => {
    const account = (await ok('accounts', 'create', 'Acme')).json.account.id as string;
    const store = openSqliteStore({ dataDir });
    const site = await store.upsertManagedSite({
      accountId: account,
      name: 'storefront',
      allowedDomains: [],
      managedBy: { kind: 'Site', namespace: 'shop', name: 'storefront', uid: 'u-1' },
    });
    await store.close();
    const refused = await run('sites', 'delete', site.id, '-a', account);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/managed by Kubernetes: edit the Site "storefront" in namespace "shop"/);
  });

  it('fails with exit code 1 for an unknown account, and 2 for invalid configuration', async () => {
    const unknown = await run('sites', 'list', '-a', 'acct_nope');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.equal('viewfinder: Account acct_nope not found\n');
    const { MONGODB_URI: _ignored, ...env } = process.env;
    const badConfig = await new Promise<number | null>((resolve) => {
      const child = spawn(BIN, ['accounts', 'list'], { env: { ...env, DATA_DIR: dataDir, STORE_BUSY_TIMEOUT_MS: 'soon', PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` } });
      child.on('close', resolve);
    });
    expect(badConfig).to.equal(2);
  });

  it("runs on the project's Node 24 when the first node on PATH is older than 22", async function () {
    const systemNode = '/usr/bin/node';
    const major = existsSync(systemNode) ? Number(execFileSync(systemNode, ['-p', 'process.versions.node.split(".")[0]']).toString()) : 0;
    if (major === 0 || major >= 22 || !existsSync(LOCAL_NODE)) {
      console.log(`      (skipped: needs an old /usr/bin/node and tools/node; found Node ${major || 'none'})`);
      this.skip();
    }
    const result = await viewfinder(dataDir, ['accounts', 'list'], `/usr/bin:/bin`);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.json).to.deep.equal({ accounts: [] });
  });
});
