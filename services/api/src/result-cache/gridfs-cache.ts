/**
 * The shared result cache: entries in MongoDB GridFS (bucket `resultCache`), so that every API
 * replica answers from the same entries. Images can be megabytes, past a document's comfortable
 * size, which is what GridFS is for. The metadata of each file holds the entry's fields and its last
 * use, which drives the same LRU size bound as on disk; expired entries are swept as new ones arrive.
 */
import mongoose from 'mongoose';
import { recordEviction } from './metrics.ts';
import type { CacheEntry, ResultCache } from './result-cache.ts';

const BUCKET = 'resultCache';
/** How often a put also sweeps expired entries: often enough to bound them, rarely enough to be free. */
const SWEEP_INTERVAL_MS = 60_000;

export interface GridFsCacheOptions {
  uri: string;
  /** Only tests set it: a database of their own. */
  dbName?: string;
  maxBytes: number;
  now?: () => number;
}

type Metadata = Omit<CacheEntry, 'image'> & { lastUsedAt: number };
interface FileDoc {
  _id: mongoose.mongo.ObjectId;
  filename: string;
  length: number;
  metadata: Metadata;
}

export interface GridFsCache extends ResultCache {
  /** Tests only: drops the database the cache used. */
  dropDatabase(): Promise<void>;
}

export async function openGridFsCache(options: GridFsCacheOptions): Promise<GridFsCache> {
  const now = options.now ?? Date.now;
  const connection = await mongoose
    .createConnection(options.uri, { serverSelectionTimeoutMS: 10_000, ...(options.dbName ? { dbName: options.dbName } : {}) })
    .asPromise();
  const db = connection.db;
  if (!db) throw new Error('MongoDB connection has no database');
  const bucket = new mongoose.mongo.GridFSBucket(db, { bucketName: BUCKET });
  const files = db.collection<FileDoc>(`${BUCKET}.files`);
  await files.createIndex({ filename: 1, uploadDate: -1 });
  await files.createIndex({ 'metadata.lastUsedAt': 1 });
  await files.createIndex({ 'metadata.expiresAt': 1 });
  let lastSweep = 0;

  const deleteFiles = async (docs: Pick<FileDoc, '_id'>[]) => {
    for (const doc of docs) await bucket.delete(doc._id).catch(() => undefined); // another replica may have won
  };
  const totalBytes = async () => {
    const [row] = await files.aggregate<{ bytes: number }>([{ $group: { _id: null, bytes: { $sum: '$length' } } }]).toArray();
    return row?.bytes ?? 0;
  };

  return {
    async get(key) {
      const doc = await files.findOne({ filename: key }, { sort: { uploadDate: -1 } });
      if (!doc) return undefined;
      if (now() >= doc.metadata.expiresAt) {
        await deleteFiles([doc]);
        recordEviction('expired');
        return undefined;
      }
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of bucket.openDownloadStream(doc._id)) chunks.push(chunk as Buffer);
      } catch {
        return undefined; // evicted by another replica while we read
      }
      await files.updateOne({ _id: doc._id }, { $set: { 'metadata.lastUsedAt': now() } });
      const { lastUsedAt: _lastUsedAt, ...metadata } = doc.metadata;
      return { ...metadata, image: Buffer.concat(chunks) };
    },

    async put(key, entry) {
      const { image, ...fields } = entry;
      const metadata: Metadata = { ...fields, lastUsedAt: now() };
      await new Promise<void>((resolve, reject) => {
        const upload = bucket.openUploadStream(key, { metadata });
        upload.once('finish', () => resolve());
        upload.once('error', reject);
        upload.end(image);
      });
      // Older versions of this entry, written before or by another replica at the same time.
      const versions = await files.find({ filename: key }, { sort: { uploadDate: -1 }, projection: { _id: 1 } }).toArray();
      await deleteFiles(versions.slice(1));

      if (now() - lastSweep >= SWEEP_INTERVAL_MS) {
        lastSweep = now();
        const expired = await files.find({ 'metadata.expiresAt': { $lte: now() } }, { projection: { _id: 1 } }).limit(1000).toArray();
        await deleteFiles(expired);
        recordEviction('expired', expired.length);
      }
      let excess = (await totalBytes()) - options.maxBytes;
      if (excess <= 0) return;
      const oldest = files.find({}, { sort: { 'metadata.lastUsedAt': 1 }, projection: { _id: 1, length: 1 } });
      let evicted = 0;
      for await (const doc of oldest) {
        if (excess <= 0) break;
        await deleteFiles([doc]);
        excess -= doc.length;
        evicted += 1;
      }
      recordEviction('size', evicted);
    },

    sizeBytes: totalBytes,

    close: () => connection.close(),

    async dropDatabase() {
      await db.dropDatabase();
    },
  };
}
