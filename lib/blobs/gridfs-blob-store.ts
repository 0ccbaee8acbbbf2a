/**
 * Blobs in MongoDB GridFS (bucket `blobs` unless told otherwise): the store every API replica on
 * one MongoDB shares, with no other server to run. The key is the file's name; the content type
 * and the caller's metadata are the file's metadata.
 *
 * GridFS writes a file's chunks first and its files document last, so a reader never finds a file
 * that is half written. A put uploads a new version beside the old ones and then deletes every
 * version but the newest (by upload date, then id: an order every replica agrees on), so of
 * concurrent puts one whole value remains; a read takes the newest version, and reads again when a
 * version is deleted under it.
 */
import type mongoose from 'mongoose';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  boundedChunks,
  DEFAULT_CONTENT_TYPE,
  DEFAULT_MAX_BLOB_BYTES,
  readAll,
  validateBlobKey,
  validateMetadata,
  type BlobInfo,
  type BlobStore,
} from './blob-store.ts';

export interface GridFsBlobStoreOptions {
  uri: string;
  /** Only tests set it: a database of their own. Default: the URI's. */
  dbName?: string;
  bucketName?: string;
  maxBytes?: number;
}

interface FileMetadata {
  contentType: string;
  fields: Record<string, string>;
}
interface FileDoc {
  _id: mongoose.mongo.ObjectId;
  filename: string;
  length: number;
  uploadDate: Date;
  metadata?: FileMetadata;
}

export interface GridFsBlobStore extends BlobStore {
  /** Tests only: drops the database the store used. */
  dropDatabase(): Promise<void>;
}

/** A read that lost its version to a concurrent put or delete tries the newest one again, this often. */
const READ_ATTEMPTS = 4;

export async function openGridFsBlobStore(options: GridFsBlobStoreOptions): Promise<GridFsBlobStore> {
  // Loaded only when used, as the store does: the MongoDB driver is slow to import.
  const { default: mongooseModule } = await import('mongoose');
  const connection = await mongooseModule
    .createConnection(options.uri, { serverSelectionTimeoutMS: 10_000, ...(options.dbName ? { dbName: options.dbName } : {}) })
    .asPromise();
  const db = connection.db;
  if (!db) throw new Error('MongoDB connection has no database');
  const bucketName = options.bucketName ?? 'blobs';
  const bucket = new mongooseModule.mongo.GridFSBucket(db, { bucketName });
  const files = db.collection<FileDoc>(`${bucketName}.files`);
  await files.createIndex({ filename: 1, uploadDate: -1 });
  const defaultMaxBytes = options.maxBytes ?? DEFAULT_MAX_BLOB_BYTES;
  const newestFirst = { uploadDate: -1, _id: -1 } as const;

  const infoOf = (doc: FileDoc): BlobInfo => ({
    key: doc.filename,
    size: doc.length,
    contentType: doc.metadata?.contentType ?? DEFAULT_CONTENT_TYPE,
    metadata: { ...doc.metadata?.fields },
    lastModified: doc.uploadDate,
  });
  const newest = (key: string) => files.findOne({ filename: validateBlobKey(key) }, { sort: newestFirst });
  const deleteVersions = async (docs: Pick<FileDoc, '_id'>[]) => {
    for (const doc of docs) await bucket.delete(doc._id).catch(() => undefined); // another replica may have won
  };

  const store: GridFsBlobStore = {
    async put(key, body, putOptions = {}) {
      validateBlobKey(key);
      const metadata: FileMetadata = { contentType: putOptions.contentType ?? DEFAULT_CONTENT_TYPE, fields: validateMetadata(putOptions.metadata) };
      const chunks = boundedChunks(key, body, putOptions.maxBytes ?? defaultMaxBytes);
      const upload = bucket.openUploadStream(key, { metadata });
      try {
        await pipeline(Readable.from(chunks), upload);
      } catch (err) {
        // Its chunks go; its files document was never written, so no reader saw it.
        await upload.abort().catch(() => undefined);
        throw err;
      }
      const versions = await files.find({ filename: key }, { sort: newestFirst, projection: { _id: 1 } }).toArray();
      await deleteVersions(versions.slice(1));
      const written = await files.findOne({ _id: upload.id });
      return written ? infoOf(written) : { key, size: upload.length, contentType: metadata.contentType, metadata: { ...metadata.fields }, lastModified: new Date() };
    },

    async get(key) {
      const doc = await newest(key);
      if (!doc) return undefined;
      return { info: infoOf(doc), body: Readable.from(bucket.openDownloadStream(doc._id)) };
    },

    async getBuffer(key) {
      for (let attempt = 1; ; attempt++) {
        const doc = await newest(key);
        if (!doc) return undefined;
        try {
          return { info: infoOf(doc), bytes: await readAll(bucket.openDownloadStream(doc._id)) };
        } catch (err) {
          if (attempt >= READ_ATTEMPTS) throw err;
        }
      }
    },

    async head(key) {
      const doc = await newest(key);
      return doc ? infoOf(doc) : undefined;
    },

    async delete(key) {
      await deleteVersions(await files.find({ filename: validateBlobKey(key) }, { projection: { _id: 1 } }).toArray());
    },

    async *list(prefix) {
      // Keys are ASCII below DEL, so every key with the prefix sorts between it and prefix + DEL.
      const filter = prefix ? { filename: { $gte: prefix, $lt: `${prefix}\x7f` } } : {};
      const docs = await files.find(filter, { projection: { filename: 1, length: 1, uploadDate: 1 }, sort: { filename: 1, ...newestFirst } }).toArray();
      const seen = new Set<string>();
      const listed = docs.filter((doc) => !seen.has(doc.filename) && seen.add(doc.filename));
      listed.sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0));
      for (const doc of listed) yield { key: doc.filename, size: doc.length, lastModified: doc.uploadDate };
    },

    describe: () => `mongodb gridfs (bucket ${bucketName})`,
    close: () => connection.close(),
    async dropDatabase() {
      await db.dropDatabase();
    },
  };
  return store;
}
