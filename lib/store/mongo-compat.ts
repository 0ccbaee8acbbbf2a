import type { Model } from 'mongoose';
import type { ManagedByRef } from './store.ts';

/**
 * What the MongoDB backend shares so that it runs the same on MongoDB and on FerretDB v1, which CI
 * runs (docs/hosted.md, "MongoDB servers"). FerretDB v1 has no partial or sparse indexes, so a
 * unique identity that only some documents carry is a field every document carries: the owner's
 * identity on a managed document, the document's own id on the others, which can never collide
 * with an owner's (ids have no slash).
 */
export function managedKey(managedBy: ManagedByRef | null | undefined, id: string): string {
  return managedBy ? ownerKey(managedBy) : id;
}

/** The filter that finds the one document a Kubernetes object owns. */
export function ownedBy(ref: ManagedByRef): { managedKey: string } {
  return { managedKey: ownerKey(ref) };
}

function ownerKey(ref: ManagedByRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** A write refused by a unique index (MongoDB's and FerretDB's E11000, from an insert or a findAndModify). */
export function isDuplicateKey(err: unknown): boolean {
  return (err as { code?: number })?.code === 11000;
}

/**
 * Runs writes to one document one after the other within this process. FerretDB v1 applies an
 * update as a read and then a write of the whole document, so two updates of one document in flight
 * at once can undo each other: a lease renewal that read the job before its completion was written
 * puts it back to running (and another replica runs it again after the lease). MongoDB needs none
 * of this; it costs it nothing but the order.
 */
export function oneWriteAtATime(): <T>(id: string, write: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return async (id, write) => {
    const previous = tails.get(id) ?? Promise.resolve();
    const mine = previous.then(write, write);
    const tail = mine.catch(() => undefined);
    tails.set(id, tail);
    try {
      return await mine;
    } finally {
      if (tails.get(id) === tail) tails.delete(id);
    }
  };
}

/**
 * An upsert that lost the race to insert its document to another's (E11000 on the unique filter) is
 * applied once more, now as an update: MongoDB retries some of those itself, FerretDB none.
 */
export async function upsertOnce<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return write();
  }
}

/**
 * Gives the documents written before `field` existed their value, one document at a time (FerretDB
 * v1 has no pipeline updates), so that the unique index on it can be built: run before the model's
 * indexes, on schemas that build none by themselves (`autoIndex: false`).
 */
export async function backfill<T extends { _id: string }>(model: Model<T>, field: string, valueOf: (doc: T) => string): Promise<void> {
  const missing = await model.find({ [field]: { $exists: false } } as never).lean<T[]>();
  for (const doc of missing) await model.updateOne({ _id: doc._id } as never, { $set: { [field]: valueOf(doc) } } as never);
}
