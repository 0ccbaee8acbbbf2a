import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { loadBlobStoreConfig } from '../../lib/blobs/open.ts';
import { loadStoreConfig } from '../../lib/store/open.ts';
import { loadStorageConfig } from '../../services/api/src/storage/config.ts';
import { helm } from '../support/k8s-tools.ts';
import { CHART } from './chart.ts';

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };

function render(sets: string[]) {
  return helm(['template', 'vf', CHART, '--namespace', 'viewfinder', ...sets.flatMap((set) => ['--set', set])]);
}

/** The API container's environment as `helm template` renders it with these --set values. */
function apiEnv(sets: string[]): Env[] {
  const { status, output, stdout } = render(sets);
  expect(status, output).to.equal(0);
  const deployment = parseAllDocuments(stdout)
    .map((document) => document.toJS())
    .find((manifest) => manifest?.kind === 'Deployment' && manifest.metadata.labels?.['app.kubernetes.io/component'] === 'api');
  return deployment.spec.template.spec.containers[0].env as Env[];
}

const plain = (env: Env[]) => Object.fromEntries(env.filter((entry) => entry.value !== undefined).map((entry) => [entry.name, entry.value as string]));
const fromSecret = (env: Env[], name: string) => env.find((entry) => entry.name === name)?.valueFrom?.secretKeyRef;

describe('chart: the API blob store on S3 and the storage destinations\' guard (api.blobStore, api.storage)', () => {
  it('sets nothing about blobs by default (the API chooses), and passes the upload bounds the API loads as documented', () => {
    const env = plain(apiEnv([]));
    expect(env).to.not.have.any.keys('BLOB_STORE', 'S3_BUCKET', 'STORAGE_ENDPOINT_ALLOWLIST');
    const storage = loadStorageConfig(env);
    expect(storage).to.deep.include({ uploadTimeoutMs: 30_000, maxUploadBytes: 100 * 1024 * 1024 });
    expect(storage.endpointAllowlist.entries).to.deep.equal([]);
  });

  it('points the API at a bucket with BLOB_STORE=s3, the credentials from the Secret only, which the API loads', () => {
    const env = apiEnv(['api.blobStore.kind=s3', 'api.blobStore.s3.endpoint=http://minio.storage:9000', 'api.blobStore.s3.bucket=viewfinder-blobs', 'api.blobStore.s3.existingSecret=viewfinder-s3']);
    expect(plain(env)).to.include({ BLOB_STORE: 's3', S3_ENDPOINT: 'http://minio.storage:9000', S3_BUCKET: 'viewfinder-blobs', S3_REGION: 'us-east-1', S3_PATH_STYLE: 'true' });
    expect(fromSecret(env, 'S3_ACCESS_KEY_ID')).to.deep.equal({ name: 'viewfinder-s3', key: 'accessKeyId' });
    expect(fromSecret(env, 'S3_SECRET_ACCESS_KEY')).to.deep.equal({ name: 'viewfinder-s3', key: 'secretAccessKey' });
    expect(plain(env)).to.not.have.any.keys('S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY');
    // What the kubelet would give the process: the plain values and the Secret's.
    const processEnv = { ...plain(env), S3_ACCESS_KEY_ID: 'id-from-secret', S3_SECRET_ACCESS_KEY: 'secret-from-secret' };
    const blobs = loadBlobStoreConfig(processEnv, loadStoreConfig(processEnv));
    expect(blobs).to.deep.include({ kind: 's3', bucket: 'viewfinder-blobs', region: 'us-east-1', pathStyle: true });
  });

  it('refuses kind s3 without a bucket or a Secret, naming what to set', () => {
    const { status, output } = render(['api.blobStore.kind=s3', 'api.blobStore.s3.bucket=viewfinder-blobs']);
    expect(status).to.not.equal(0);
    expect(output).to.include('api.blobStore.kind=s3 needs api.blobStore.s3.bucket and api.blobStore.s3.existingSecret');
  });

  it('refuses kind gridfs without MongoDB', () => {
    const { status, output } = render(['store=embedded', 'api.blobStore.kind=gridfs']);
    expect(status).to.not.equal(0);
    expect(output).to.include('api.blobStore.kind=gridfs needs MongoDB');
  });

  it('opens the endpoint guard to an in-cluster object store only through api.storage.endpointAllowlist', () => {
    const env = plain(apiEnv(['api.storage.endpointAllowlist={10.96.0.0/12,minio.storage.svc.cluster.local}', 'api.storage.uploadTimeoutSeconds=10', 'api.storage.maxUploadMb=20']));
    expect(env).to.include({ STORAGE_ENDPOINT_ALLOWLIST: '10.96.0.0/12,minio.storage.svc.cluster.local', STORAGE_UPLOAD_TIMEOUT_MS: '10000', STORAGE_MAX_UPLOAD_MB: '20' });
    const storage = loadStorageConfig(env);
    expect(storage.endpointAllowlist.allowsAddress('10.96.4.2')).to.equal(true);
    expect(storage.endpointAllowlist.allowsHost('minio.storage.svc.cluster.local')).to.equal(true);
    expect(storage.endpointAllowlist.allowsAddress('169.254.169.254')).to.equal(false);
  });

  it('passes STORAGE_DESTINATIONS in self-hosted mode from the Secret only, which the API loads with the upload bounds', () => {
    const SELF = ['api.mode=self-hosted', 'operator.enabled=false'];
    expect(apiEnv(SELF).map((entry) => entry.name)).to.not.include('STORAGE_DESTINATIONS');
    const env = apiEnv([...SELF, 'api.storage.destinations.existingSecret=viewfinder-destinations', 'api.storage.endpointAllowlist={minio.storage.svc.cluster.local}']);
    expect(fromSecret(env, 'STORAGE_DESTINATIONS')).to.deep.equal({ name: 'viewfinder-destinations', key: 'destinations.json' });
    expect(plain(env)).to.include({ STORAGE_UPLOAD_TIMEOUT_MS: '30000', STORAGE_ENDPOINT_ALLOWLIST: 'minio.storage.svc.cluster.local' });
    expect(plain(env)).to.not.have.any.keys('STORAGE_DESTINATIONS');
    // What the kubelet would give the process: the Secret's JSON beside the plain values.
    const list = [{ name: 'archive', endpoint: 'http://minio.storage.svc.cluster.local:9000', bucket: 'acme-shots', pathStyle: true, credentials: { accessKeyId: 'id-from-secret', secretAccessKey: 'secret-from-secret' } }];
    const storage = loadStorageConfig({ ...plain(env), STORAGE_DESTINATIONS: JSON.stringify(list) });
    expect(storage.destinations.map((entry) => entry.destination.name)).to.deep.equal(['archive']);
    expect(storage.endpointAllowlist.allowsHost('minio.storage.svc.cluster.local')).to.equal(true);
    expect(fromSecret(apiEnv([...SELF, 'api.storage.destinations.existingSecret=d', 'api.storage.destinations.existingSecretKey=list']), 'STORAGE_DESTINATIONS')).to.deep.equal({ name: 'd', key: 'list' });
  });

  it('refuses api.storage.destinations in hosted mode, naming why', () => {
    const { status, output } = render(['api.storage.destinations.existingSecret=viewfinder-destinations']);
    expect(status).to.not.equal(0);
    expect(output).to.include('api.storage.destinations is for api.mode=self-hosted');
  });

  it('rejects typos and unknown kinds through values.schema.json', () => {
    for (const set of ['api.blobStore.s3.bukket=x', 'api.blobStore.kind=ceph', 'api.storage.endpointAllowlist={a b}', 'api.storage.maxUploadMb=0', 'api.storage.destinations.secret=x']) {
      const { status, output } = render([set]);
      expect(status, set).to.not.equal(0);
      expect(output, set).to.match(/values don't meet the specifications of the schema/);
    }
  });
});
