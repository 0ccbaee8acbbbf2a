import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { hashApiKey } from '../../lib/api-keys.ts';
import { DatabaseSync } from 'node:sqlite';
import { openSqliteStore, SQLITE_FILE } from '../../lib/store/sqlite.ts';
import type { Store } from '../../lib/store/store.ts';
import { storeConformance } from './conformance.ts';
import { sealingConformance } from './sealing-conformance.ts';

const WORKER = fileURLToPath(new URL('./fixtures/sqlite-worker.ts', import.meta.url));

function tempDataDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'viewfinder-store-'));
}

/** Runs the worker as a separate Node process on the same DATA_DIR and returns its JSON answer. */
function worker(dataDir: string, ...args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, dataDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Record<string, unknown>) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

describe('store: embedded sqlite backend', () => {
  describe('conformance', () => {
    const dirs: string[] = [];
    after(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
    storeConformance(async () => {
      const dir = tempDataDir();
      dirs.push(dir);
      return openSqliteStore({ dataDir: dir });
    });
  });

  sealingConformance(() => {
    const dataDir = tempDataDir();
    const raw = () => new DatabaseSync(path.join(dataDir, SQLITE_FILE));
    return {
      open: async (secretKeys) => openSqliteStore({ dataDir, secretKeys }),
      async rawSigningSecret(keyId) {
        const db = raw();
        try {
          return ((db.prepare('SELECT signing_secret FROM api_keys WHERE id = ?').get(keyId) as { signing_secret: string | null } | undefined)?.signing_secret ?? null);
        } finally {
          db.close();
        }
      },
      async rawDestinationCredentials(accountId, name) {
        const db = raw();
        try {
          return ((db.prepare('SELECT credentials FROM destinations WHERE account_id = ? AND name = ?').get(accountId, name) as { credentials: string } | undefined)?.credentials ?? null);
        } finally {
          db.close();
        }
      },
      async writePlainSigningSecret(keyId, secret) {
        const db = raw();
        try {
          db.prepare('UPDATE api_keys SET signing_secret = ? WHERE id = ?').run(secret, keyId);
        } finally {
          db.close();
        }
      },
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  });

  describe('upgrading a DATA_DIR from before signing secrets', () => {
    it('adds the key columns: old keys have no signing secret until regenerated and no unsigned links, new keys get a secret', async () => {
      const dataDir = tempDataDir();
      try {
        const before = openSqliteStore({ dataDir });
        const account = await before.createAccount({ name: 'Acme' });
        const old = await before.createKey({ accountId: account.id, name: 'old', kind: 'full' });
        await before.close();
        const db = new DatabaseSync(path.join(dataDir, SQLITE_FILE));
        db.exec('ALTER TABLE api_keys DROP COLUMN signing_secret');
        db.exec('ALTER TABLE api_keys DROP COLUMN unsigned_links');
        db.close();

        const after = openSqliteStore({ dataDir });
        try {
          expect((await after.findKeyByHash(hashApiKey(old.secret)))?.id).to.equal(old.key.id);
          expect(await after.getSigningSecret(old.key.id)).to.equal(null);
          expect((await after.getKey(old.key.id))?.unsignedLinks).to.equal(false);
          const regenerated = await after.regenerateKey(old.key.id);
          expect(await after.getSigningSecret(old.key.id)).to.equal(regenerated!.signingSecret);
          const fresh = await after.createKey({ accountId: account.id, name: 'new', kind: 'full' });
          expect(await after.getSigningSecret(fresh.key.id)).to.equal(fresh.signingSecret);
        } finally {
          await after.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('upgrading a DATA_DIR from before Sites owned storage destinations (issue #43)', () => {
    it('adds the owner columns: existing destinations are unmanaged and keep their credentials; a Site can own a new one', async () => {
      const dataDir = tempDataDir();
      const credentials = { accessKeyId: 'AKIAOLDDESTINATION01', secretAccessKey: 'old-destination-secret' };
      const fields = { endpoint: 'https://s3.example', bucket: 'acme-shots', region: 'us-east-1', pathStyle: false, keyTemplate: '{id}.{format}', credentials };
      try {
        const before = openSqliteStore({ dataDir });
        const account = await before.createAccount({ name: 'Acme' });
        await before.createDestination({ accountId: account.id, name: 'old', ...fields });
        await before.close();
        const db = new DatabaseSync(path.join(dataDir, SQLITE_FILE));
        for (const column of ['managed_kind', 'managed_namespace', 'managed_name', 'managed_uid']) db.exec(`ALTER TABLE destinations DROP COLUMN ${column}`);
        db.close();

        const after = openSqliteStore({ dataDir });
        try {
          expect((await after.getDestination(account.id, 'old'))?.managedBy).to.equal(null);
          expect(await after.getDestinationCredentials(account.id, 'old')).to.deep.equal(credentials);
          const managedBy = { kind: 'Site' as const, namespace: 'shop', name: 'storefront', uid: 'u1' };
          expect((await after.upsertManagedDestination({ accountId: account.id, name: 'new', ...fields, managedBy })).managedBy).to.deep.equal(managedBy);
        } finally {
          await after.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('upgrading a DATA_DIR from before monitors counted in usage', () => {
    it("rebuilds the usage tables to accept the 'monitor' scope, keeping their rows", async () => {
      const dataDir = tempDataDir();
      try {
        const before = openSqliteStore({ dataDir });
        const account = await before.createAccount({ name: 'Acme' });
        await before.recordUsage({ accountId: account.id, siteId: 'site_a', keyId: 'key_a', outcome: 'capture', bytes: 100 });
        await before.close();
        // Put back the tables as they were: a CHECK that knows only sites and keys.
        const db = new DatabaseSync(path.join(dataDir, SQLITE_FILE));
        for (const table of ['usage', 'usage_daily']) {
          const { sql } = db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(table) as { sql: string };
          db.exec(`ALTER TABLE ${table} RENAME TO ${table}_current`);
          db.exec(sql.replace(", 'monitor')", ')'));
          db.exec(`INSERT INTO ${table} SELECT * FROM ${table}_current; DROP TABLE ${table}_current`);
        }
        expect(() => db.prepare("INSERT INTO usage (scope, id, account_id) VALUES ('monitor', 'mon_x', 'acct_x')").run(), 'the old CHECK').to.throw(/CHECK constraint/);
        db.close();

        const after = openSqliteStore({ dataDir });
        try {
          await after.recordUsage({ accountId: account.id, siteId: null, monitorId: 'mon_a', outcome: 'capture', bytes: 50 });
          expect(await after.listUsage(account.id)).to.deep.equal([
            { scope: 'key', id: 'key_a', captures: 1, failures: 0, bytes: 100 },
            { scope: 'monitor', id: 'mon_a', captures: 1, failures: 0, bytes: 50 },
            { scope: 'site', id: 'site_a', captures: 1, failures: 0, bytes: 100 },
          ]);
          expect((await after.listUsageHistory(account.id, '2000-01-01')).map((row) => `${row.scope}:${row.id}`)).to.deep.equal(['key:key_a', 'monitor:mon_a', 'site:site_a']);
        } finally {
          await after.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('durability and sharing DATA_DIR between processes', () => {
    let dataDir: string;
    let store: Store;
    beforeEach(() => {
      dataDir = tempDataDir();
      store = openSqliteStore({ dataDir });
    });
    afterEach(async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("shares rate-limit counters between handles on one DATA_DIR: together they allow exactly the limit", async () => {
      const second = openSqliteStore({ dataDir });
      try {
        const states = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? second : store).consumeRateLimit('key', 5, 60)));
        expect(states.filter((s) => s.allowed)).to.have.length(5);
      } finally {
        await second.close();
      }
    });

    it('keeps accounts, sites and keys across a close and reopen', async () => {
      const account = await store.createAccount({ name: 'Acme' });
      const site = await store.createSite({ accountId: account.id, name: 's', allowedDomains: ['example.com'] });
      const { secret } = await store.createKey({ accountId: account.id, name: 'k', kind: 'site', siteId: site.id });
      await store.close();
      store = openSqliteStore({ dataDir });
      expect((await store.getSite(site.id))?.allowedDomains).to.deep.equal(['example.com']);
      expect((await store.findKeyByHash(hashApiKey(secret)))?.siteId).to.equal(site.id);
    });

    it('sees a site written by a second process at once', async () => {
      const account = await store.createAccount({ name: 'Acme' });
      const { siteId } = await worker(dataDir, 'create-site', account.id, 'example.org');
      expect((await store.getSite(siteId as string))?.allowedDomains).to.deep.equal(['example.org']);
    });

    it('stops finding a key by its old secret as soon as a second process regenerates it', async () => {
      const account = await store.createAccount({ name: 'Acme' });
      const { key, secret } = await store.createKey({ accountId: account.id, name: 'k', kind: 'full' });
      const { secret: fresh } = await worker(dataDir, 'regenerate', key.id);
      expect(await store.findKeyByHash(hashApiKey(secret))).to.equal(null);
      expect((await store.findKeyByHash(hashApiKey(fresh as string)))?.id).to.equal(key.id);
    });

    it('loses no write when two processes write at the same time', async () => {
      const account = await store.createAccount({ name: 'Acme' });
      const site = await store.createSite({ accountId: account.id, name: 's', allowedDomains: [] });
      const writes = 200;
      const other = worker(dataDir, 'write-many', account.id, site.id, String(writes));
      for (let i = 0; i < writes; i++) {
        await store.recordUsage({ accountId: account.id, siteId: site.id, keyId: 'key_parent', outcome: 'capture', bytes: 1 });
        if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      await other;
      const siteUsage = (await store.listUsage(account.id)).find((row) => row.scope === 'site');
      expect(siteUsage?.captures).to.equal(2 * writes);
    });

    it('gives every job to exactly one of two processes claiming from one DATA_DIR at once', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 200; i++) ids.add((await store.enqueueJob({ type: 'race', ownerId: 'owner', payload: { i }, maxAttempts: 1 })).job.id);
      const [one, two] = await Promise.all([worker(dataDir, 'claim-all'), worker(dataDir, 'claim-all')]);
      const claimed = [...(one.claimed as string[]), ...(two.claimed as string[])];
      expect(claimed).to.have.length(200);
      expect(new Set(claimed)).to.deep.equal(ids);
    });

    it('keeps committed data and drops the open transaction when a writer is killed mid-write', async () => {
      await store.close();
      const child = spawn(process.execPath, [WORKER, dataDir, 'crash-mid-write'], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('close', resolve));
      store = openSqliteStore({ dataDir });
      const names = (await store.listAccounts()).map((account) => account.name);
      expect(names).to.deep.equal(['committed']);
    });
  });
});
