/**
 * Where monitors keep their pictures (captures and diffs): the service's blob store (BLOB_STORE,
 * lib/blobs), under monitor-images/<id>.png, beside asynchronous results. An image is written once
 * under a fresh id and deleted when no run or baseline names it any more.
 *
 * Releases before the blob store kept them as files under DATA_DIR/monitor-images or in the GridFS
 * bucket `monitorImages`. Those are still read and deleted where they are (a baseline can be months
 * old), and nothing new is written there: they leave as their runs and baselines do.
 */
import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '../../../../lib/blobs/blob-store.ts';
import { openBlobStore } from '../../../../lib/blobs/open.ts';
import { newId } from '../../../../lib/store/rules.ts';
import type { LegacyMonitorImagesConfig, MonitorImagesConfig } from './config.ts';

export interface MonitorImages {
  /** Stores a PNG and answers its id (`img_…`). */
  put(png: Buffer): Promise<string>;
  get(id: string): Promise<Buffer | null>;
  delete(ids: string[]): Promise<void>;
  close(): Promise<void>;
}

/** Where an earlier release kept its pictures: read and deleted there, never written. */
type LegacyImages = Omit<MonitorImages, 'put'>;

const ID = /^img_[0-9a-f]{24}$/;
const PREFIX = 'monitor-images/';
const keyOf = (id: string) => `${PREFIX}${id}.png`;
/** A monitor picture is a screenshot or its diff: never near this, and the bound keeps a runaway one out. */
const MAX_IMAGE_BYTES = 128 * 1024 * 1024;

/**
 * The pictures in `blobs` when given (the API's one store, closed by its owner), else in a blob
 * store of their own opened from the configuration; with the earlier release's place beside them.
 */
export async function openMonitorImages(config: MonitorImagesConfig, blobs?: BlobStore): Promise<MonitorImages> {
  const own = blobs ? undefined : await openBlobStore(config.blobs);
  const legacy = await openLegacyImages(config.legacy);
  const images = monitorImagesIn((blobs ?? own)!, legacy);
  return {
    ...images,
    async close() {
      await images.close();
      await own?.close();
    },
  };
}

/** The pictures in a blob store, reading (and deleting) what `legacy` still holds. Closes `legacy`, not the blob store. */
export function monitorImagesIn(blobs: BlobStore, legacy?: LegacyImages): MonitorImages {
  return {
    async put(png) {
      const id = newId('img');
      await blobs.put(keyOf(id), png, { contentType: 'image/png', maxBytes: MAX_IMAGE_BYTES });
      return id;
    },
    async get(id) {
      if (!ID.test(id)) return null;
      return (await blobs.getBuffer(keyOf(id)))?.bytes ?? (await legacy?.get(id)) ?? null;
    },
    async delete(ids) {
      const valid = ids.filter((id) => ID.test(id));
      await Promise.all(valid.map((id) => blobs.delete(keyOf(id))));
      await legacy?.delete(valid);
    },
    close: async () => legacy?.close(),
  };
}

async function openLegacyImages(config: LegacyMonitorImagesConfig): Promise<LegacyImages> {
  return config.backend === 'disk' ? legacyDiskImages(config.dir) : legacyGridFsImages(config.mongodbUri);
}

function legacyDiskImages(dir: string): LegacyImages {
  const fileOf = (id: string) => path.join(dir, `${id}.png`);
  return {
    async get(id) {
      return readFile(fileOf(id)).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
    },
    async delete(ids) {
      await Promise.all(ids.map((id) => unlink(fileOf(id)).catch(() => undefined)));
    },
    close: async () => undefined,
  };
}

async function legacyGridFsImages(uri: string): Promise<LegacyImages> {
  // Loaded only when used, as the store does: the MongoDB driver is slow to import.
  const { default: mongoose } = await import('mongoose');
  const connection = await mongoose.createConnection(uri, { serverSelectionTimeoutMS: 10_000 }).asPromise();
  const db = connection.db;
  if (!db) throw new Error('MongoDB connection has no database');
  const bucket = new mongoose.mongo.GridFSBucket(db, { bucketName: 'monitorImages' });
  const files = db.collection<{ _id: unknown; filename: string }>('monitorImages.files');
  return {
    async get(id) {
      if (!(await files.findOne({ filename: id }))) return null;
      const chunks: Buffer[] = [];
      for await (const chunk of bucket.openDownloadStreamByName(id)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    async delete(ids) {
      if (ids.length === 0) return;
      for (const doc of await files.find({ filename: { $in: ids } }).toArray()) await bucket.delete(doc._id as never).catch(() => undefined);
    },
    close: () => connection.close(),
  };
}
