import { expect } from 'chai';
import { hashApiKey, looksLikeApiKey } from '../../lib/api-keys.ts';
import { BadRequest, Conflict, NotFound } from '../../lib/errors.ts';
import type { Account, ManagedBy, Store } from '../../lib/store/store.ts';
import { userStoreConformance } from './users-conformance.ts';
import { jobStoreConformance } from './jobs-conformance.ts';
import { monitorStoreConformance } from './monitors-conformance.ts';
import { destinationStoreConformance } from './destinations-conformance.ts';

/**
 * The store port's conformance suite. Every backend runs exactly these cases (sqlite.test.ts,
 * mongo.test.ts), so the API, the CLI and the operator can rely on one behaviour.
 */
export function storeConformance(open: () => Promise<Store>, cleanup: (store: Store) => Promise<void> = (store) => store.close()): void {
  let store: Store;
  let account: Account;
  let other: Account;

  beforeEach(async () => {
    store = await open();
    account = await store.createAccount({ name: 'Acme' });
    other = await store.createAccount({ name: 'Other', rateLimitPerMinute: 5 });
  });
  afterEach(() => cleanup(store));

  const rejects = async (promise: Promise<unknown>, type: new (...args: never[]) => Error, text?: RegExp) => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'expected a rejection').to.be.instanceOf(type);
    if (text) expect((err as Error).message).to.match(text);
  };

  const managed = (kind: ManagedBy['kind'], name: string, uid = 'uid-1'): ManagedBy => ({ kind, namespace: 'team-a', name, uid });

  describe('accounts', () => {
    it('creates accounts with a default rate limit of null and lists them all', async () => {
      expect(account).to.include({ name: 'Acme', rateLimitPerMinute: null });
      expect(account.id).to.match(/^acct_[0-9a-f]{24}$/);
      expect(account.createdAt).to.be.instanceOf(Date);
      const ids = (await store.listAccounts()).map((a) => a.id);
      expect(ids).to.include.members([account.id, other.id]);
    });

    it('gets an account by id, and null for an unknown id', async () => {
      expect((await store.getAccount(other.id))?.rateLimitPerMinute).to.equal(5);
      expect(await store.getAccount('acct_missing')).to.equal(null);
    });

    it('sets and clears the per-account rate limit', async () => {
      expect((await store.setAccountRateLimit(account.id, 120))?.rateLimitPerMinute).to.equal(120);
      expect((await store.getAccount(account.id))?.rateLimitPerMinute).to.equal(120);
      expect((await store.setAccountRateLimit(account.id, null))?.rateLimitPerMinute).to.equal(null);
      expect(await store.setAccountRateLimit('acct_missing', 1)).to.equal(null);
    });
  });

  describe('sites', () => {
    it('creates a site with its domains and reads it back', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'Shop', allowedDomains: ['example.com', 'shop.example.org'] });
      expect(site.id).to.match(/^site_[0-9a-f]{24}$/);
      expect(site).to.deep.include({ accountId: account.id, name: 'Shop', allowedDomains: ['example.com', 'shop.example.org'], managedBy: null });
      expect(await store.getSite(site.id)).to.deep.equal(site);
    });

    it('refuses a site for an account that does not exist', async () => {
      await rejects(store.createSite({ accountId: 'acct_missing', name: 'x', allowedDomains: [] }), NotFound);
    });

    it('lists only the sites of the given account', async () => {
      const mine = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      await store.createSite({ accountId: other.id, name: 'b', allowedDomains: [] });
      expect((await store.listSites(account.id)).map((s) => s.id)).to.deep.equal([mine.id]);
    });

    it('replaces allowedDomains on update and moves updatedAt, and answers null for an unknown site', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: ['a.com'] });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const updated = await store.updateSite(site.id, { allowedDomains: ['b.com'] });
      expect(updated?.allowedDomains).to.deep.equal(['b.com']);
      expect(updated?.name).to.equal('a');
      expect(updated!.updatedAt.getTime()).to.be.greaterThan(site.updatedAt.getTime());
      expect(await store.updateSite('site_missing', { allowedDomains: [] })).to.equal(null);
    });

    it('deletes a site together with the keys scoped to it, and keeps the full-access keys', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      const scoped = await store.createKey({ accountId: account.id, name: 'scoped', kind: 'site', siteId: site.id });
      const full = await store.createKey({ accountId: account.id, name: 'full', kind: 'full' });
      expect(await store.deleteSite(site.id)).to.equal(true);
      expect(await store.getSite(site.id)).to.equal(null);
      expect(await store.getKey(scoped.key.id)).to.equal(null);
      expect(await store.findKeyByHash(scoped.key.hash)).to.equal(null);
      expect(await store.getKey(full.key.id)).to.not.equal(null);
      expect(await store.deleteSite(site.id)).to.equal(false);
    });
  });

  describe('API keys', () => {
    it('issues a vf_ key with 32 random bytes, stores only its SHA-256 and a short display prefix', async () => {
      const { key, secret } = await store.createKey({ accountId: account.id, name: 'ci', kind: 'full' });
      expect(looksLikeApiKey(secret)).to.equal(true);
      expect(Buffer.from(secret.slice(3), 'base64url')).to.have.length(32);
      expect(key.hash).to.equal(hashApiKey(secret));
      expect(key.prefix).to.equal(secret.slice(0, 11));
      expect(JSON.stringify(key)).to.not.include(secret.slice(11));
      expect(key).to.deep.include({ accountId: account.id, name: 'ci', kind: 'full', siteId: null, restrictDomains: false, unsignedLinks: false, lastUsedAt: null, managedBy: null });
    });

    it('issues a different secret every time', async () => {
      const a = await store.createKey({ accountId: account.id, name: 'a', kind: 'full' });
      const b = await store.createKey({ accountId: account.id, name: 'b', kind: 'full' });
      expect(a.secret).to.not.equal(b.secret);
    });

    it('issues a signing secret with each key, kept server-side and readable by key id only', async () => {
      const { key, secret, signingSecret } = await store.createKey({ accountId: account.id, name: 'ci', kind: 'full' });
      expect(signingSecret).to.match(/^vfs_[A-Za-z0-9_-]{43}$/);
      expect(signingSecret).to.not.equal(secret);
      expect(await store.getSigningSecret(key.id)).to.equal(signingSecret);
      expect(await store.getSigningSecret('key_missing')).to.equal(null);
      for (const read of [key, await store.getKey(key.id), ...(await store.listKeys(account.id)), await store.findKeyByHash(hashApiKey(secret))]) {
        expect(JSON.stringify(read)).to.not.include(signingSecret.slice(4));
      }
    });

    it('finds a key by the hash of its secret, and nothing by the hash of anything else', async () => {
      const { key, secret } = await store.createKey({ accountId: account.id, name: 'ci', kind: 'full' });
      expect((await store.findKeyByHash(hashApiKey(secret)))?.id).to.equal(key.id);
      expect(await store.findKeyByHash(hashApiKey(`${secret}x`))).to.equal(null);
    });

    it('scopes a site key to a site of the same account, with restrictDomains', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      const { key } = await store.createKey({ accountId: account.id, name: 's', kind: 'site', siteId: site.id, restrictDomains: true });
      expect(key).to.include({ kind: 'site', siteId: site.id, restrictDomains: true });
    });

    it("refuses a site key for another account's site, or for no site", async () => {
      const foreign = await store.createSite({ accountId: other.id, name: 'b', allowedDomains: [] });
      await rejects(store.createKey({ accountId: account.id, name: 's', kind: 'site', siteId: foreign.id }), NotFound);
      await rejects(store.createKey({ accountId: account.id, name: 's', kind: 'site' }), BadRequest);
    });

    it('lets only site keys allow unsigned render links, off unless asked for', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      const plain = await store.createKey({ accountId: account.id, name: 'p', kind: 'site', siteId: site.id });
      expect(plain.key.unsignedLinks).to.equal(false);
      const open = await store.createKey({ accountId: account.id, name: 'o', kind: 'site', siteId: site.id, unsignedLinks: true });
      expect(open.key.unsignedLinks).to.equal(true);
      expect((await store.getKey(open.key.id))?.unsignedLinks).to.equal(true);
      expect((await store.createKey({ accountId: account.id, name: 'f', kind: 'full' })).key.unsignedLinks).to.equal(false);
      await rejects(store.createKey({ accountId: account.id, name: 'f', kind: 'full', unsignedLinks: true }), BadRequest, /unsignedLinks needs a site key/);
    });

    it('refuses a full-access key with a site or with domain restrictions', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      await rejects(store.createKey({ accountId: account.id, name: 'f', kind: 'full', siteId: site.id }), BadRequest);
      await rejects(store.createKey({ accountId: account.id, name: 'f', kind: 'full', restrictDomains: true }), BadRequest);
    });

    it('lists only the keys of the given account', async () => {
      const mine = await store.createKey({ accountId: account.id, name: 'm', kind: 'full' });
      await store.createKey({ accountId: other.id, name: 'o', kind: 'full' });
      expect((await store.listKeys(account.id)).map((k) => k.id)).to.deep.equal([mine.key.id]);
    });

    it('regenerates a key in place: same id, a new secret, and the old hash finds nothing', async () => {
      const first = await store.createKey({ accountId: account.id, name: 'ci', kind: 'full' });
      const second = await store.regenerateKey(first.key.id);
      expect(second?.key.id).to.equal(first.key.id);
      expect(second?.secret).to.not.equal(first.secret);
      expect(await store.findKeyByHash(hashApiKey(first.secret))).to.equal(null);
      expect((await store.findKeyByHash(hashApiKey(second!.secret)))?.id).to.equal(first.key.id);
      expect(second!.signingSecret).to.match(/^vfs_/).and.not.equal(first.signingSecret);
      expect(await store.getSigningSecret(first.key.id)).to.equal(second!.signingSecret);
      expect(await store.regenerateKey('key_missing')).to.equal(null);
    });

    it('deletes a key, after which its hash finds nothing', async () => {
      const { key, secret } = await store.createKey({ accountId: account.id, name: 'ci', kind: 'full' });
      expect(await store.deleteKey(key.id)).to.equal(true);
      expect(await store.findKeyByHash(hashApiKey(secret))).to.equal(null);
      expect(await store.deleteKey(key.id)).to.equal(false);
    });

    it('records when a key was last used', async () => {
      const { key } = await store.createKey({ accountId: account.id, name: 'ci', kind: 'full' });
      const at = new Date('2026-01-02T03:04:05.678Z');
      await store.touchKey(key.id, at);
      expect((await store.getKey(key.id))?.lastUsedAt?.toISOString()).to.equal(at.toISOString());
    });
  });

  describe('objects managed by the operator', () => {
    it('upserts a managed site idempotently: the same id every time, with the latest domains and uid', async () => {
      const managedBy = managed('Site', 'shop');
      const first = await store.upsertManagedSite({ accountId: account.id, name: 'shop', allowedDomains: ['a.com'], managedBy });
      const again = await store.upsertManagedSite({ accountId: account.id, name: 'shop', allowedDomains: ['a.com'], managedBy });
      const changed = await store.upsertManagedSite({ accountId: account.id, name: 'shop', allowedDomains: ['b.com'], managedBy: { ...managedBy, uid: 'uid-2' } });
      expect([again.id, changed.id]).to.deep.equal([first.id, first.id]);
      expect(changed.allowedDomains).to.deep.equal(['b.com']);
      expect(changed.managedBy).to.deep.equal({ ...managedBy, uid: 'uid-2' });
      expect(await store.listSites(account.id)).to.have.length(1);
    });

    it('finds a managed site by kind, namespace and name, and nothing for another name', async () => {
      const site = await store.upsertManagedSite({ accountId: account.id, name: 'shop', allowedDomains: [], managedBy: managed('Site', 'shop') });
      expect((await store.findSiteByManagedBy({ kind: 'Site', namespace: 'team-a', name: 'shop' }))?.id).to.equal(site.id);
      expect(await store.findSiteByManagedBy({ kind: 'Site', namespace: 'team-b', name: 'shop' })).to.equal(null);
    });

    it('refuses a second object for the same managedBy identity, and moving it to another account', async () => {
      const managedBy = managed('Site', 'shop');
      await store.upsertManagedSite({ accountId: account.id, name: 'shop', allowedDomains: [], managedBy });
      await rejects(store.createSite({ accountId: account.id, name: 'dup', allowedDomains: [], managedBy }), Conflict);
      await rejects(store.upsertManagedSite({ accountId: other.id, name: 'shop', allowedDomains: [], managedBy }), Conflict);
    });

    it('creates a managed key once with its secret, then returns the same key without one', async () => {
      const site = await store.upsertManagedSite({ accountId: account.id, name: 'shop', allowedDomains: [], managedBy: managed('Site', 'shop') });
      const input = { accountId: account.id, name: 'shop-key', kind: 'site' as const, siteId: site.id, managedBy: managed('ApiKey', 'shop-key') };
      const created = await store.upsertManagedKey(input);
      expect(created.secret).to.be.a('string');
      expect(created.key.managedBy).to.deep.equal(input.managedBy);
      const again = await store.upsertManagedKey({ ...input, restrictDomains: true });
      expect(again.secret).to.equal(null);
      expect(again.signingSecret).to.equal(null);
      expect(created.signingSecret).to.match(/^vfs_/);
      expect(await store.getSigningSecret(created.key.id)).to.equal(created.signingSecret);
      expect(again.key.id).to.equal(created.key.id);
      expect(again.key.restrictDomains).to.equal(true);
      expect((await store.findKeyByHash(hashApiKey(created.secret!)))?.id).to.equal(created.key.id);
      expect((await store.findKeyByManagedBy({ kind: 'ApiKey', namespace: 'team-a', name: 'shop-key' }))?.id).to.equal(created.key.id);
    });

    it('rotates and deletes a managed key through the same calls as any key', async () => {
      const created = await store.upsertManagedKey({ accountId: account.id, name: 'k', kind: 'full', managedBy: managed('ApiKey', 'k') });
      const rotated = await store.regenerateKey(created.key.id);
      expect(await store.findKeyByHash(hashApiKey(created.secret!))).to.equal(null);
      expect((await store.findKeyByHash(hashApiKey(rotated!.secret)))?.managedBy?.name).to.equal('k');
      expect(await store.getSigningSecret(created.key.id)).to.equal(rotated!.signingSecret).and.not.equal(created.signingSecret);
      expect(await store.deleteKey(created.key.id)).to.equal(true);
      expect(await store.findKeyByManagedBy({ kind: 'ApiKey', namespace: 'team-a', name: 'k' })).to.equal(null);
    });
  });

  describe('rate-limit counters', () => {
    it("allows exactly a key's limit in a window, then refuses with the time until it resets", async () => {
      const states = [];
      for (let i = 0; i < 4; i++) states.push(await store.consumeRateLimit('key-a', 3, 60));
      expect(states.map((s) => s.allowed)).to.deep.equal([true, true, true, false]);
      expect(states.map((s) => s.remaining)).to.deep.equal([2, 1, 0, 0]);
      expect(states[3]!.msBeforeReset).to.be.within(1, 60_000);
    });

    it('counts keys apart, and a changed limit starts a budget of its own', async () => {
      expect((await store.consumeRateLimit('key-a', 1, 60)).allowed).to.equal(true);
      expect((await store.consumeRateLimit('key-a', 1, 60)).allowed).to.equal(false);
      expect((await store.consumeRateLimit('key-b', 1, 60)).allowed).to.equal(true);
      expect((await store.consumeRateLimit('key-a', 2, 60)).remaining).to.equal(1);
    });

    it('never allows more than the limit to concurrent callers', async () => {
      const states = await Promise.all(Array.from({ length: 10 }, () => store.consumeRateLimit('key-c', 4, 60)));
      expect(states.filter((s) => s.allowed)).to.have.length(4);
    });
  });

  describe('usage', () => {
    it('loses no count when captures of one account are recorded concurrently', async () => {
      const event = { accountId: account.id, siteId: 'site_x', keyId: 'key_x', outcome: 'capture' as const, bytes: 10 };
      await Promise.all(Array.from({ length: 40 }, () => store.recordUsage(event)));
      const rows = await store.listUsage(account.id);
      expect(rows.find((row) => row.scope === 'site')).to.deep.include({ captures: 40, bytes: 400 });
      expect(rows.find((row) => row.scope === 'key')).to.deep.include({ captures: 40, bytes: 400 });
    });

    it('counts captures, failures and bytes per site and per key, for that account only', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      const one = await store.createKey({ accountId: account.id, name: '1', kind: 'site', siteId: site.id });
      const two = await store.createKey({ accountId: account.id, name: '2', kind: 'full' });
      const event = { accountId: account.id, siteId: site.id };
      await store.recordUsage({ ...event, keyId: one.key.id, outcome: 'capture', bytes: 1000 });
      await store.recordUsage({ ...event, keyId: two.key.id, outcome: 'capture', bytes: 500 });
      await store.recordUsage({ ...event, keyId: two.key.id, outcome: 'failure', bytes: 0 });
      const rows = await store.listUsage(account.id);
      const find = (scope: string, id: string) => rows.find((row) => row.scope === scope && row.id === id);
      expect(find('site', site.id)).to.deep.include({ captures: 2, failures: 1, bytes: 1500 });
      expect(find('key', one.key.id)).to.deep.include({ captures: 1, failures: 0, bytes: 1000 });
      expect(find('key', two.key.id)).to.deep.include({ captures: 1, failures: 1, bytes: 500 });
      expect(await store.listUsage(other.id)).to.deep.equal([]);
    });

    it('keeps the same counts per UTC day, from the day asked for', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      const { key } = await store.createKey({ accountId: account.id, name: '1', kind: 'site', siteId: site.id });
      await store.recordUsage({ accountId: account.id, siteId: site.id, keyId: key.id, outcome: 'capture', bytes: 700 });
      await store.recordUsage({ accountId: account.id, siteId: site.id, keyId: key.id, outcome: 'failure', bytes: 0 });
      const today = new Date().toISOString().slice(0, 10);
      const history = await store.listUsageHistory(account.id, '2000-01-01');
      expect(history).to.deep.equal([
        { day: today, scope: 'key', id: key.id, captures: 1, failures: 1, bytes: 700 },
        { day: today, scope: 'site', id: site.id, captures: 1, failures: 1, bytes: 700 },
      ]);
      expect(await store.listUsageHistory(account.id, '9999-01-01')).to.deep.equal([]);
      expect(await store.listUsageHistory(other.id, '2000-01-01')).to.deep.equal([]);
    });

    it('counts a page monitor’s captures for the monitor instead of a key, and for its site only when it has one', async () => {
      const site = await store.createSite({ accountId: account.id, name: 'a', allowedDomains: [] });
      await store.recordUsage({ accountId: account.id, siteId: site.id, monitorId: 'mon_scoped', outcome: 'capture', bytes: 300 });
      await store.recordUsage({ accountId: account.id, siteId: site.id, monitorId: 'mon_scoped', outcome: 'failure', bytes: 0 });
      await store.recordUsage({ accountId: account.id, siteId: null, monitorId: 'mon_full', outcome: 'capture', bytes: 200 });
      expect(await store.listUsage(account.id)).to.deep.equal([
        { scope: 'monitor', id: 'mon_full', captures: 1, failures: 0, bytes: 200 },
        { scope: 'monitor', id: 'mon_scoped', captures: 1, failures: 1, bytes: 300 },
        { scope: 'site', id: site.id, captures: 1, failures: 1, bytes: 300 },
      ]);
      const today = new Date().toISOString().slice(0, 10);
      expect(await store.listUsageHistory(account.id, '2000-01-01')).to.deep.equal([
        { day: today, scope: 'monitor', id: 'mon_full', captures: 1, failures: 0, bytes: 200 },
        { day: today, scope: 'monitor', id: 'mon_scoped', captures: 1, failures: 1, bytes: 300 },
        { day: today, scope: 'site', id: site.id, captures: 1, failures: 1, bytes: 300 },
      ]);
    });
  });

  userStoreConformance(() => ({ store, account, other }));
  jobStoreConformance(() => ({ store, account, other }));
  monitorStoreConformance(() => ({ store, account, other }));
  destinationStoreConformance(() => ({ store, account, other }));
}
