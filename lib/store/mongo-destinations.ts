import { Schema, type Connection } from 'mongoose';
import { NotFound } from '../errors.ts';
import { credentialSealer, duplicateDestination, type DestinationStore, type NewDestination, type StorageDestination } from './destinations.ts';
import { isDuplicateKey, oneWriteAtATime } from './mongo-compat.ts';
import { assertSameAccount, newId } from './rules.ts';
import type { SecretKeys } from './secret-sealing.ts';
import type { ManagedByRef } from './store.ts';

/**
 * Storage destinations in MongoDB: one document each, the name unique per account by index, the
 * credentials one sealed string. Every write is a single-document operation.
 */
type DestinationDoc = Omit<StorageDestination, 'id'> & { _id: string; credentials: string };

const destinationSchema = new Schema<DestinationDoc>(
  {
    _id: String,
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    endpoint: { type: String, required: true },
    bucket: { type: String, required: true },
    region: { type: String, required: true },
    pathStyle: { type: Boolean, required: true },
    keyTemplate: { type: String, required: true },
    credentials: { type: String, required: true },
    // The owning Kubernetes Site (issue #43); absent (null) on the others. Looked up by its three
    // identity fields: one destination per Site, written by the operator alone.
    managedBy: { type: new Schema({ kind: String, namespace: String, name: String, uid: String }, { _id: false }), default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
destinationSchema.index({ accountId: 1, name: 1 }, { unique: true });

export async function mongoDestinationStore(
  connection: Connection,
  secretKeys: SecretKeys | undefined,
  accountExists: (id: string) => Promise<boolean>,
): Promise<DestinationStore & { resealDestinationCredentials(): Promise<number> }> {
  const Destinations = connection.model<DestinationDoc>('Destination', destinationSchema, 'destinations');
  await Destinations.createIndexes();
  const sealer = credentialSealer(secretKeys);
  const serially = oneWriteAtATime();
  const PUBLIC = { credentials: 0 } as const;
  const get = async (accountId: string, name: string) => toDestination(await Destinations.findOne({ accountId, name }, PUBLIC).lean());

  const owned = (ref: ManagedByRef) => ({ 'managedBy.kind': ref.kind, 'managedBy.namespace': ref.namespace, 'managedBy.name': ref.name });
  const findOwned = async (ref: ManagedByRef) => toDestination(await Destinations.findOne(owned(ref), PUBLIC).lean());
  const insert = async (input: NewDestination) => {
    if (!(await accountExists(input.accountId))) throw new NotFound(`Account ${input.accountId} not found`);
    const { credentials, managedBy, ...fields } = input;
    const now = new Date();
    try {
      await Destinations.create({ _id: newId('dest'), ...fields, managedBy: managedBy ?? null, credentials: sealer.seal(credentials), createdAt: now, updatedAt: now });
    } catch (err) {
      if (isDuplicateKey(err)) throw duplicateDestination(input.name);
      throw err;
    }
    return (await get(input.accountId, input.name)) as StorageDestination;
  };

  return {
    createDestination: insert,
    findDestinationByManagedBy: findOwned,
    async upsertManagedDestination(input) {
      const existing = await findOwned(input.managedBy);
      if (!existing) return insert(input);
      assertSameAccount(existing.accountId, input.accountId, input.managedBy);
      const { credentials, managedBy, accountId: _account, ...fields } = input;
      const set = { ...fields, credentials: sealer.seal(credentials), 'managedBy.uid': managedBy.uid, updatedAt: new Date() };
      // A new name must not take another destination's (FerretDB's update does not say E11000 the way an insert does).
      if (existing.name !== input.name && (await get(input.accountId, input.name))) throw duplicateDestination(input.name);
      try {
        await serially(`${existing.accountId}/${existing.name}`, () => Destinations.updateOne({ _id: existing.id }, { $set: set }));
      } catch (err) {
        // The unique (account, name) index: the new name is another destination's.
        if (isDuplicateKey(err)) throw duplicateDestination(input.name);
        throw err;
      }
      return (await get(input.accountId, input.name)) as StorageDestination;
    },
    getDestination: get,
    async listDestinations(accountId) {
      return (await Destinations.find({ accountId }, PUBLIC).sort({ name: 1 }).lean()).map((doc) => toDestination(doc) as StorageDestination);
    },
    async updateDestination(accountId, name, patch) {
      const { credentials, ...fields } = patch;
      const set = { ...fields, ...(credentials ? { credentials: sealer.seal(credentials) } : {}), updatedAt: new Date() };
      // No projection on findAndModify (FerretDB v1 has none): toDestination leaves the credentials out.
      const updated = await serially(`${accountId}/${name}`, () => Destinations.findOneAndUpdate({ accountId, name }, { $set: set }, { returnDocument: 'after' }).lean());
      return toDestination(updated);
    },
    async deleteDestination(accountId, name) {
      return (await Destinations.deleteOne({ accountId, name })).deletedCount > 0;
    },
    async getDestinationCredentials(accountId, name) {
      const doc = await Destinations.findOne({ accountId, name }, { credentials: 1 }).lean();
      return doc ? sealer.open(doc.credentials) : null;
    },
    async resealDestinationCredentials() {
      const stale = (await Destinations.find({}, { credentials: 1, accountId: 1, name: 1 }).lean()).filter((doc) => !sealer.isCurrent(doc.credentials));
      // Each only if it is still what was read: credentials replaced meanwhile keep their new value.
      for (const doc of stale) {
        await serially(`${doc.accountId}/${doc.name}`, () => Destinations.updateOne({ _id: doc._id, credentials: doc.credentials }, { $set: { credentials: sealer.reseal(doc.credentials) } }));
      }
      return stale.length;
    },
  };
}

function toDestination(doc: Omit<DestinationDoc, 'credentials'> | null): StorageDestination | null {
  return (
    doc && {
      id: doc._id,
      accountId: doc.accountId,
      name: doc.name,
      endpoint: doc.endpoint,
      bucket: doc.bucket,
      region: doc.region,
      pathStyle: doc.pathStyle,
      keyTemplate: doc.keyTemplate,
      managedBy: doc.managedBy?.name ? { kind: doc.managedBy.kind, namespace: doc.managedBy.namespace, name: doc.managedBy.name, uid: doc.managedBy.uid } : null,
      createdAt: doc.createdAt,
      updatedAt: doc.updatedAt,
    }
  );
}
