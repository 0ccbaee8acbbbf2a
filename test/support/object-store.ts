import { randomBytes } from 'node:crypto';
import { createS3Bucket, deleteS3Bucket, type S3BlobStoreOptions } from '../../lib/blobs/s3-blob-store.ts';
import { serverLater, waitForServerLater } from './deferred-server.ts';
import { describeWithServer } from './skip.ts';

/**
 * The S3-compatible object store the S3 legs run on: the one VIEWFINDER_TEST_S3_* name (make test
 * starts versitygw through test/cluster/with-test-servers.sh and sets them). Not S3_*: every
 * service process a test starts would inherit those; a test hands them to a process itself.
 */
const env = process.env;
const s3FromEnv = () =>
  env.VIEWFINDER_TEST_S3_ENDPOINT && env.VIEWFINDER_TEST_S3_ACCESS_KEY_ID && env.VIEWFINDER_TEST_S3_SECRET_ACCESS_KEY
    ? {
        endpoint: env.VIEWFINDER_TEST_S3_ENDPOINT,
        region: env.VIEWFINDER_TEST_S3_REGION || 'us-east-1',
        accessKeyId: env.VIEWFINDER_TEST_S3_ACCESS_KEY_ID,
        secretAccessKey: env.VIEWFINDER_TEST_S3_SECRET_ACCESS_KEY,
      }
    : undefined;
export type TestS3 = NonNullable<ReturnType<typeof s3FromEnv>>;

/**
 * On a cold cache with-test-servers.sh builds versitygw in the background (VIEWFINDER_TEST_S3_LATER):
 * the store is then this, whose fields are read once describeOnS3's first hook has waited for it.
 */
const LATER = 'VIEWFINDER_TEST_S3_LATER';
let started: TestS3 | undefined;
const s3Later: TestS3 = {
  get endpoint() {
    return startedS3().endpoint;
  },
  get region() {
    return startedS3().region;
  },
  get accessKeyId() {
    return startedS3().accessKeyId;
  },
  get secretAccessKey() {
    return startedS3().secretAccessKey;
  },
};
function startedS3(): TestS3 {
  if (!started) throw new Error('the object store built in the background is not up yet: read its fields in a hook or a test, after describeOnS3 has waited for it');
  return started;
}

export const TEST_S3: TestS3 | undefined = s3FromEnv() ?? (serverLater(LATER) ? s3Later : undefined);

/** Why an S3 leg skips, and how to run it. */
export const NO_S3 =
  'VIEWFINDER_TEST_S3_ENDPOINT (with VIEWFINDER_TEST_S3_ACCESS_KEY_ID and VIEWFINDER_TEST_S3_SECRET_ACCESS_KEY) is not set, so there is no object store to test against. ' +
  '`make test` starts one (versitygw, built from Go modules); for one file: VIEWFINDER_CLUSTER=none test/cluster/with-test-servers.sh node_modules/.bin/mocha FILE';

/**
 * `describe(title)` whose body runs only with an object store; without one it holds a single test
 * that skips, saying why and how to get one. A store still building waits in the describe's first hook.
 */
export function describeOnS3(title: string, body: (this: Mocha.Suite, s3: TestS3) => void): void {
  describeWithServer(title, TEST_S3, { test: 'is skipped: no object store (VIEWFINDER_TEST_S3_ENDPOINT)', why: NO_S3 }, function (s3) {
    if (s3 === s3Later) {
      before(async function () {
        this.timeout(0);
        await waitForServerLater(LATER, 'the test object store (versitygw)');
        started = s3FromEnv();
      });
    }
    body.call(this, s3);
  });
}

/** A bucket of its own on the test store: made now, emptied and removed by `dispose`. */
export async function freshBucket(s3: TestS3): Promise<{ options: S3BlobStoreOptions; env: Record<string, string>; dispose(): Promise<void> }> {
  const options: S3BlobStoreOptions = {
    endpoint: new URL(s3.endpoint),
    bucket: `viewfinder-test-${randomBytes(6).toString('hex')}`,
    region: s3.region,
    pathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  };
  await createS3Bucket(options);
  return {
    options,
    /** What an API process needs to put its blobs there (docs/configuration.md). */
    env: {
      BLOB_STORE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: options.bucket,
      S3_REGION: s3.region,
      S3_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    },
    dispose: () => deleteS3Bucket(options),
  };
}
