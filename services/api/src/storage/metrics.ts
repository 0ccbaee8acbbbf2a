/**
 * Uploads to clients' storage destinations, in the API's registry. Labelled by outcome only: never
 * a destination's name, endpoint, bucket or key, which belong to clients and are unbounded.
 */
import { Counter, Histogram } from 'prom-client';
import { apiRegistry } from '../metrics.ts';
import { UPLOAD_OUTCOMES, type UploadOutcome } from './upload.ts';

const OUTCOME = ['outcome'] as const;

const uploads = new Counter({
  name: 'viewfinder_storage_uploads_total',
  help:
    'Captures written to a storage destination, by outcome: uploaded; refused (the network guard refused the endpoint, nothing sent); rejected (the destination answered an error: ' +
    'wrong keys, no such bucket); unreachable (no DNS answer, no connection); timeout; too_large (past STORAGE_MAX_UPLOAD_MB).',
  labelNames: OUTCOME,
  registers: [apiRegistry],
});
for (const outcome of UPLOAD_OUTCOMES) uploads.inc({ outcome }, 0);

const uploadDuration = new Histogram({
  name: 'viewfinder_storage_upload_duration_seconds',
  help: 'Time of one upload attempt to a storage destination, from resolving its endpoint to its answer, by outcome.',
  labelNames: OUTCOME,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [apiRegistry],
});

export function recordUpload(outcome: UploadOutcome, seconds: number): void {
  uploads.inc({ outcome });
  uploadDuration.observe({ outcome }, seconds);
}
