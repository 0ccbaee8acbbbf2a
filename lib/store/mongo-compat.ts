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
