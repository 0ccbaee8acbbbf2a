import mongoose, { Schema, type Connection } from 'mongoose';
import { generateApiKey, generateSigningSecret } from '../api-keys.ts';
import { Conflict, NotFound } from '../errors.ts';
import { mongoUsageHistory } from './mongo-usage-history.ts';
import { mongoUserStore } from './mongo-users.ts';
import { mongoJobStore } from './mongo-jobs.ts';
import { mongoMonitorStore } from './mongo-monitors.ts';
import { mongoDestinationStore } from './mongo-destinations.ts';
import { assertSameAccount, duplicateManagedBy, newId, placeKey, USAGE_SCOPES, usageScopes } from './rules.ts';
import { backfill, isDuplicateKey, managedKey, oneWriteAtATime, ownedBy, upsertOnce } from './mongo-compat.ts';
import { mongoRateLimit } from './mongo-rate-limit.ts';
import { secretSealer, type SecretKeys } from './secret-sealing.ts';
import type { Account, ApiKey, IssuedKey, ManagedBy, NewKey, NewSite, Site, Store, UsageRow, UsageScope } from './store.ts';

/**
 * The MongoDB store, through mongoose. Documents use the same string ids as the embedded store.
 * Every write that must be atomic is a single-document operation (regeneration replaces the hash
 * in one update; managed upserts are one findOneAndUpdate on a unique index), so no replica set
 * or multi-document transaction is needed. Deleting a site removes the site first, then its keys:
 * between the two, authentication already refuses a key whose site is gone.
 */

const managedBySchema = new Schema<ManagedBy>(
  {
    kind: { type: String, required: true, enum: ['Site', 'ApiKey'] },
    namespace: { type: String, required: true },
    name: { type: String, required: true },
    uid: { type: String, required: true },
  },
  { _id: false },
);

// One managed object per owner: unique on managedKey (the owner's identity, or the document's id).
const MANAGED_INDEX = { managedKey: 1 } as const;
const MANAGED_ONLY = { unique: true } as const;

interface AccountDoc {
  _id: string;
  name: string;
  rateLimitPerMinute: number | null;
  createdAt: Date;
}
interface SiteDoc {
  _id: string;
  accountId: string;
  name: string;
  allowedDomains: string[];
  managedBy?: ManagedBy | null;
  managedKey: string;
  createdAt: Date;
  updatedAt: Date;
}
interface KeyDoc {
  _id: string;
  accountId: string;
  name: string;
  kind: 'full' | 'site';
  siteId: string | null;
  restrictDomains: boolean;
  /** Absent on keys made before the setting existed: false. */
  unsignedLinks?: boolean;
  hash: string;
  prefix: string;
  /** Absent on keys issued before signing secrets existed; never read into an ApiKey. */
  signingSecret?: string | null;
  managedBy?: ManagedBy | null;
  managedKey: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}
interface UsageDoc {
  scope: UsageScope;
  id: string;
  accountId: string;
  captures: number;
  failures: number;
  bytes: number;
}

const accountSchema = new Schema<AccountDoc>(
  { _id: String, name: { type: String, required: true }, rateLimitPerMinute: { type: Number, default: null }, createdAt: { type: Date, required: true } },
  { versionKey: false },
);
const siteSchema = new Schema<SiteDoc>(
  {
    _id: String,
    accountId: { type: String, required: true, index: true },
    name: { type: String, required: true },
    allowedDomains: { type: [String], default: [] },
    managedBy: { type: managedBySchema, default: undefined },
    managedKey: { type: String, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  // Indexes are built after the managedKey backfill (openMongoStore).
  { versionKey: false, autoIndex: false },
);
siteSchema.index(MANAGED_INDEX, MANAGED_ONLY);
const keySchema = new Schema<KeyDoc>(
  {
    _id: String,
    accountId: { type: String, required: true, index: true },
    name: { type: String, required: true },
    kind: { type: String, required: true, enum: ['full', 'site'] },
    siteId: { type: String, default: null, index: true },
    restrictDomains: { type: Boolean, required: true },
    unsignedLinks: { type: Boolean, default: false },
    hash: { type: String, required: true, unique: true },
    prefix: { type: String, required: true },
    signingSecret: { type: String, default: null },
    managedBy: { type: managedBySchema, default: undefined },
    managedKey: { type: String, required: true },
    createdAt: { type: Date, required: true },
    lastUsedAt: { type: Date, default: null },
  },
  { versionKey: false, autoIndex: false },
);
keySchema.index(MANAGED_INDEX, MANAGED_ONLY);
const usageSchema = new Schema<UsageDoc>(
  {
    scope: { type: String, required: true, enum: USAGE_SCOPES },
    id: { type: String, required: true },
    accountId: { type: String, required: true, index: true },
    captures: { type: Number, default: 0 },
    failures: { type: Number, default: 0 },
    bytes: { type: Number, default: 0 },
  },
  { versionKey: false },
);
usageSchema.index({ scope: 1, id: 1 }, { unique: true });

export interface MongoOptions {
  uri: string;
  /** Overrides the database named in the URI; the tests use a fresh one per run. */
  dbName?: string;
  /** SIGNING_SECRETS_KEY and the previous ones: signing secrets are sealed with them (secret-sealing.ts). */
  secretKeys?: SecretKeys;
}

export async function openMongoStore(options: MongoOptions): Promise<Store & { dropDatabase(): Promise<void> }> {
  const sealer = secretSealer(options.secretKeys);
  const connection: Connection = await mongoose
    .createConnection(options.uri, { serverSelectionTimeoutMS: 10_000, ...(options.dbName ? { dbName: options.dbName } : {}) })
    .asPromise();
  const Accounts = connection.model<AccountDoc>('Account', accountSchema, 'accounts');
  const Sites = connection.model<SiteDoc>('Site', siteSchema, 'sites');
  const Keys = connection.model<KeyDoc>('ApiKey', keySchema, 'apiKeys');
  const Usage = connection.model<UsageDoc>('Usage', usageSchema, 'usage');
  // Sites and keys written before managedKey existed get it first: its unique index needs it on all.
  await Promise.all([backfill(Sites, 'managedKey', (doc) => managedKey(doc.managedBy, doc._id)), backfill(Keys, 'managedKey', (doc) => managedKey(doc.managedBy, doc._id))]);
  await Promise.all([Accounts.createIndexes(), Sites.createIndexes(), Keys.createIndexes(), Usage.createIndexes()]);

  const getSite = async (id: string) => toSite(await Sites.findById(id).lean());
  const getKey = async (id: string) => toKey(await Keys.findById(id).lean());
  const requireAccount = async (id: string) => {
    if (!(await Accounts.exists({ _id: id }))) throw new NotFound(`Account ${id} not found`);
  };

  const insertSite = async (input: NewSite): Promise<Site> => {
    await requireAccount(input.accountId);
    const now = new Date();
    const id = newId('site');
    try {
      const created = await Sites.create({
        _id: id,
        accountId: input.accountId,
        name: input.name,
        allowedDomains: input.allowedDomains,
        ...(input.managedBy ? { managedBy: input.managedBy } : {}),
        managedKey: managedKey(input.managedBy, id),
        createdAt: now,
        updatedAt: now,
      });
      return toSite(created.toObject()) as Site;
    } catch (err) {
      if (input.managedBy && isDuplicateKey(err)) throw duplicateManagedBy(input.managedBy);
      throw err;
    }
  };

  const insertKey = async (input: NewKey): Promise<IssuedKey> => {
    await requireAccount(input.accountId);
    const placement = placeKey(input, input.siteId ? await getSite(input.siteId) : null);
    const generated = generateApiKey();
    const signingSecret = generateSigningSecret();
    const id = newId('key');
    try {
      const created = await Keys.create({
        _id: id,
        accountId: input.accountId,
        name: input.name,
        kind: input.kind,
        siteId: placement.siteId,
        restrictDomains: placement.restrictDomains,
        unsignedLinks: placement.unsignedLinks,
        hash: generated.hash,
        prefix: generated.prefix,
        signingSecret: sealer.seal(signingSecret),
        ...(input.managedBy ? { managedBy: input.managedBy } : {}),
        managedKey: managedKey(input.managedBy, id),
        createdAt: new Date(),
        lastUsedAt: null,
      });
      return { key: toKey(created.toObject()) as ApiKey, secret: generated.secret, signingSecret };
    } catch (err) {
      if (input.managedBy && isDuplicateKey(err)) throw duplicateManagedBy(input.managedBy);
      throw err;
    }
  };

  // Writes that may meet on one document within this process go one at a time (FerretDB v1 rewrites
  // whole documents): a key's use and its regeneration, an account's usage counters.
  const serially = oneWriteAtATime();

  const users = await mongoUserStore(connection, async (id) => (await Accounts.exists({ _id: id })) !== null);
  const usageHistory = await mongoUsageHistory(connection);
  const jobs = await mongoJobStore(connection);
  const monitors = await mongoMonitorStore(connection);
  const { resealDestinationCredentials, ...destinations } = await mongoDestinationStore(connection, options.secretKeys, async (id) => (await Accounts.exists({ _id: id })) !== null);

  return {
    backend: 'mongo',
    ...users,
    listUsageHistory: usageHistory.listUsageHistory,
    ...jobs,
    ...monitors,
    ...destinations,
    consumeRateLimit: mongoRateLimit(connection),

    async createAccount(input) {
      const created = await Accounts.create({ _id: newId('acct'), name: input.name, rateLimitPerMinute: input.rateLimitPerMinute ?? null, createdAt: new Date() });
      return toAccount(created.toObject()) as Account;
    },
    getAccount: async (id) => toAccount(await Accounts.findById(id).lean()),
    listAccounts: async () => (await Accounts.find().sort({ createdAt: 1, _id: 1 }).lean()).map((doc) => toAccount(doc) as Account),
    async setAccountRateLimit(id, perMinute) {
      return toAccount(await Accounts.findByIdAndUpdate(id, { $set: { rateLimitPerMinute: perMinute } }, { returnDocument: 'after' }).lean());
    },

    createSite: insertSite,
    getSite,
    listSites: async (accountId) => (await Sites.find({ accountId }).sort({ createdAt: 1, _id: 1 }).lean()).map((doc) => toSite(doc) as Site),
    async updateSite(id, patch) {
      const set: Partial<SiteDoc> = { updatedAt: new Date() };
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.allowedDomains !== undefined) set.allowedDomains = patch.allowedDomains;
      return toSite(await Sites.findByIdAndUpdate(id, { $set: set }, { returnDocument: 'after' }).lean());
    },
    async deleteSite(id) {
      const { deletedCount } = await Sites.deleteOne({ _id: id });
      await Keys.deleteMany({ siteId: id });
      return deletedCount > 0;
    },
    async upsertManagedSite(input) {
      const existing = await Sites.findOne(ownedBy(input.managedBy)).lean();
      if (!existing) {
        try {
          return await insertSite(input);
        } catch (err) {
          // Another writer created it between our read and our insert: fall through to the update.
          if (!(err instanceof Conflict)) throw err;
        }
      }
      const current = existing ?? (await Sites.findOne(ownedBy(input.managedBy)).lean());
      if (!current) throw new NotFound(`Site for ${input.managedBy.namespace}/${input.managedBy.name} vanished during the upsert`);
      assertSameAccount(current.accountId, input.accountId, input.managedBy);
      const updated = await Sites.findByIdAndUpdate(
        current._id,
        { $set: { name: input.name, allowedDomains: input.allowedDomains, 'managedBy.uid': input.managedBy.uid, updatedAt: new Date() } },
        { returnDocument: 'after' },
      ).lean();
      return toSite(updated) as Site;
    },
    findSiteByManagedBy: async (ref) => toSite(await Sites.findOne(ownedBy(ref)).lean()),

    createKey: insertKey,
    getKey,
    listKeys: async (accountId) => (await Keys.find({ accountId }).sort({ createdAt: 1, _id: 1 }).lean()).map((doc) => toKey(doc) as ApiKey),
    findKeyByHash: async (hash) => toKey(await Keys.findOne({ hash }).lean()),
    async regenerateKey(id) {
      const generated = generateApiKey();
      const signingSecret = generateSigningSecret();
      // One document update: the old hash and signing secret are gone in the very write that stores the new ones.
      const updated = await serially(id, () =>
        Keys.findByIdAndUpdate(id, { $set: { hash: generated.hash, prefix: generated.prefix, signingSecret: sealer.seal(signingSecret) } }, { returnDocument: 'after' }).lean(),
      );
      return updated ? { key: toKey(updated) as ApiKey, secret: generated.secret, signingSecret } : null;
    },
    deleteKey: async (id) => (await Keys.deleteOne({ _id: id })).deletedCount > 0,
    async upsertManagedKey(input) {
      const existing = await Keys.findOne(ownedBy(input.managedBy)).lean();
      if (!existing) return insertKey(input);
      assertSameAccount(existing.accountId, input.accountId, input.managedBy);
      const placement = placeKey(input, input.siteId ? await getSite(input.siteId) : null);
      const updated = await Keys.findByIdAndUpdate(
        existing._id,
        { $set: { name: input.name, kind: input.kind, siteId: placement.siteId, restrictDomains: placement.restrictDomains, 'managedBy.uid': input.managedBy.uid } },
        { returnDocument: 'after' },
      ).lean();
      return { key: toKey(updated) as ApiKey, secret: null, signingSecret: null };
    },
    findKeyByManagedBy: async (ref) => toKey(await Keys.findOne(ownedBy(ref)).lean()),
    async getSigningSecret(id) {
      const stored = (await Keys.findById(id, { signingSecret: 1 }).lean())?.signingSecret;
      return typeof stored === 'string' ? sealer.open(stored) : null;
    },
    async resealSigningSecrets() {
      const stale = (await Keys.find({ signingSecret: { $type: 'string' } }, { signingSecret: 1 }).lean()).filter((doc) => !sealer.isCurrent(doc.signingSecret as string));
      // Each only if it is still what was read: a key regenerated meanwhile keeps its new secret.
      for (const doc of stale) await serially(doc._id, () => Keys.updateOne({ _id: doc._id, signingSecret: doc.signingSecret }, { $set: { signingSecret: sealer.seal(sealer.open(doc.signingSecret as string)) } }));
      return stale.length + (await resealDestinationCredentials());
    },
    async touchKey(id, at) {
      await serially(id, () => Keys.updateOne({ _id: id }, { $set: { lastUsedAt: at } }));
    },

    async recordUsage(event) {
      const inc = { captures: event.outcome === 'capture' ? 1 : 0, failures: event.outcome === 'failure' ? 1 : 0, bytes: event.bytes };
      await serially(event.accountId, async () => {
        for (const [scope, id] of usageScopes(event)) {
          await upsertOnce(() => Usage.updateOne({ scope, id }, { $inc: inc, $setOnInsert: { accountId: event.accountId } }, { upsert: true }));
        }
        await usageHistory.recordDay(event);
      });
    },
    async listUsage(accountId) {
      const docs = await Usage.find({ accountId }).sort({ scope: 1, id: 1 }).lean();
      return docs.map((doc): UsageRow => ({ scope: doc.scope, id: doc.id, captures: doc.captures, failures: doc.failures, bytes: doc.bytes }));
    },

    async close() {
      await connection.close();
    },
    async dropDatabase() {
      await connection.dropDatabase();
    },
  };
}


function toManagedBy(value: ManagedBy | null | undefined): ManagedBy | null {
  return value ? { kind: value.kind, namespace: value.namespace, name: value.name, uid: value.uid } : null;
}

function toAccount(doc: AccountDoc | null): Account | null {
  return doc && { id: doc._id, name: doc.name, rateLimitPerMinute: doc.rateLimitPerMinute ?? null, createdAt: doc.createdAt };
}

function toSite(doc: SiteDoc | null): Site | null {
  return (
    doc && {
      id: doc._id,
      accountId: doc.accountId,
      name: doc.name,
      allowedDomains: [...doc.allowedDomains],
      managedBy: toManagedBy(doc.managedBy),
      createdAt: doc.createdAt,
      updatedAt: doc.updatedAt,
    }
  );
}

function toKey(doc: KeyDoc | null): ApiKey | null {
  return (
    doc && {
      id: doc._id,
      accountId: doc.accountId,
      name: doc.name,
      kind: doc.kind,
      siteId: doc.siteId ?? null,
      restrictDomains: doc.restrictDomains,
      unsignedLinks: doc.unsignedLinks ?? false,
      hash: doc.hash,
      prefix: doc.prefix,
      managedBy: toManagedBy(doc.managedBy),
      createdAt: doc.createdAt,
      lastUsedAt: doc.lastUsedAt ?? null,
    }
  );
}
