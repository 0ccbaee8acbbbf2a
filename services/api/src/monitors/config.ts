/**
 * Page monitors' settings (docs/configuration.md). Their pictures go to the blob store (BLOB_STORE);
 * pictures of releases before it are still read where those kept them (images.ts).
 */
import path from 'node:path';
import { readInt, type Env } from '../../../../lib/env.ts';
import type { BlobStoreConfig } from '../../../../lib/blobs/open.ts';
import type { StoreConfig } from '../../../../lib/store/open.ts';

/** Where releases before the blob store kept monitor pictures: GridFS beside MongoDB, else DATA_DIR/monitor-images. */
export type LegacyMonitorImagesConfig = { backend: 'disk'; dir: string } | { backend: 'gridfs'; mongodbUri: string };
export interface MonitorImagesConfig {
  blobs: BlobStoreConfig;
  legacy: LegacyMonitorImagesConfig;
}

export interface MonitorsConfig {
  images: MonitorImagesConfig;
  /** MONITOR_SLOT_SHARE: the share (percent) of the render tier's slots monitor captures may use at most. */
  slotSharePercent: number;
  /** How often each API replica looks for schedules to queue (MONITOR_SCHEDULER_INTERVAL_MS). */
  schedulerIntervalMs: number;
  /** Monitor runs at once in one API replica (MONITOR_RUN_CONCURRENCY). */
  runConcurrency: number;
}

export function loadMonitorsConfig(env: Env, store: StoreConfig, blobs: BlobStoreConfig): MonitorsConfig {
  return {
    images: {
      blobs,
      legacy: store.backend === 'mongo' ? { backend: 'gridfs', mongodbUri: store.mongodbUri } : { backend: 'disk', dir: path.join(store.dataDir, 'monitor-images') },
    },
    slotSharePercent: readInt(env, 'MONITOR_SLOT_SHARE', 25, { min: 1, max: 100 }),
    schedulerIntervalMs: readInt(env, 'MONITOR_SCHEDULER_INTERVAL_MS', 5000, { min: 100, max: 60_000 }),
    runConcurrency: readInt(env, 'MONITOR_RUN_CONCURRENCY', 1, { min: 1, max: 32 }),
  };
}
