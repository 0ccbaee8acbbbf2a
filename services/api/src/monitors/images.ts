/**
 * Where monitors keep their pictures (captures and diffs): files under DATA_DIR/monitor-images with
 * the embedded store, a GridFS bucket (`monitorImages`) with MongoDB, beside the result cache's.
 * An image is written once under a fresh id and deleted when no run or baseline names it any more.
 */
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newId } from '../../../../lib/store/rules.ts';
import type { MonitorImagesConfig } from './config.ts';

export interface MonitorImages {
  /** Stores a PNG and answers its id (`img_…`). */
  put(png: Buffer): Promise<string>;
  get(id: string): Promise<Buffer | null>;
  delete(ids: string[]): Promise<void>;
  close(): Promise<void>;
}

const ID = /^img_[0-9a-f]{24}$/;

export async function openMonitorImages(config: MonitorImagesConfig): Promise<MonitorImages> {
  if (config.backend === 'disk') return openDiskImages(config.dir);
  return openGridFsImages(config.mongodbUri);
}

async function openDiskImages(dir: string): Promise<MonitorImages> {
  await mkdir(dir, { recursive: true });
  const fileOf = (id: string) => path.join(dir, `${id}.png`);
  return {
    async put(png) {
      const id = newId('img');
      const temporary = `${fileOf(id)}.${process.pid}.tmp`;
      await writeFile(temporary, png);
      await rename(temporary, fileOf(id));
      return id;
    },
    async get(id) {
      if (!ID.test(id)) return null;
      return readFile(fileOf(id)).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
    },
    async delete(ids) {
      await Promise.all(ids.filter((id) => ID.test(id)).map((id) => unlink(fileOf(id)).catch(() => undefined)));
    },
    close: async () => undefined,
  };
}

async function openGridFsImages(uri: string, dbName?: string): Promise<MonitorImages> {
  // Loaded only when used, as the store does: the MongoDB driver is slow to import.
  const { default: mongoose } = await import('mongoose');
  const connection = await mongoose.createConnection(uri, { serverSelectionTimeoutMS: 10_000, ...(dbName ? { dbName } : {}) }).asPromise();
  const db = connection.db;
  if (!db) throw new Error('MongoDB connection has no database');
  const bucket = new mongoose.mongo.GridFSBucket(db, { bucketName: 'monitorImages' });
  const files = db.collection<{ _id: unknown; filename: string }>('monitorImages.files');
  await files.createIndex({ filename: 1 });
  return {
    async put(png) {
      const id = newId('img');
      await new Promise<void>((resolve, reject) => {
        const upload = bucket.openUploadStream(id, { metadata: { contentType: 'image/png' } });
        upload.once('finish', () => resolve());
        upload.once('error', reject);
        upload.end(png);
      });
      return id;
    },
    async get(id) {
      if (!ID.test(id) || !(await files.findOne({ filename: id }))) return null;
      const chunks: Buffer[] = [];
      for await (const chunk of bucket.openDownloadStreamByName(id)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    async delete(ids) {
      for (const doc of await files.find({ filename: { $in: ids } }).toArray()) await bucket.delete(doc._id as never).catch(() => undefined);
    },
    close: () => connection.close(),
  };
}
