import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { loadCapturesConfig } from '../../services/api/src/captures/config.ts';
import { helm } from '../support/k8s-tools.ts';
import { CHART } from './chart.ts';

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };

/** The API Deployment as `helm template` renders it with these --set values. */
function apiDeployment(sets: string[]) {
  const { status, output, stdout } = helm(['template', 'vf', CHART, '--namespace', 'viewfinder', ...sets.flatMap((set) => ['--set', set])]);
  expect(status, output).to.equal(0);
  return parseAllDocuments(stdout)
    .map((document) => document.toJS())
    .find((manifest) => manifest?.kind === 'Deployment' && manifest.metadata.labels?.['app.kubernetes.io/component'] === 'api');
}

/** The API container's environment as `helm template` renders it with these --set values. */
const apiEnv = (sets: string[]): Env[] => apiDeployment(sets).spec.template.spec.containers[0].env as Env[];

/** NOTES.txt as `helm install --dry-run=client` prints it with these --set values. */
function notes(sets: string[]): string {
  const { status, output, stdout } = helm(['install', 'vf', CHART, '--namespace', 'viewfinder', '--dry-run=client', ...sets.flatMap((set) => ['--set', set])]);
  expect(status, output).to.equal(0);
  return stdout.slice(stdout.indexOf('NOTES:'));
}

const plain = (env: Env[]) => Object.fromEntries(env.filter((entry) => entry.value !== undefined).map((entry) => [entry.name, entry.value as string]));

describe('chart: asynchronous captures settings (api.asyncCaptures)', () => {
  it('passes the defaults to the API as the variables it reads, which it loads as documented', () => {
    const config = loadCapturesConfig(plain(apiEnv([])));
    expect(config).to.deep.include({ enabled: true, concurrency: 8, sharePercent: 50, maxQueuedPerOwner: 1000, resultTtlMs: 86_400_000, selfHostedSigningSecret: undefined });
    expect(config.webhook.maxAttempts).to.equal(12);
  });

  it('turns them off, and takes other bounds', () => {
    const env = plain(apiEnv(['api.asyncCaptures.enabled=false', 'api.asyncCaptures.jobConcurrency=3', 'api.asyncCaptures.maxQueuedPerAccount=50']));
    expect(env).to.include({ ASYNC_CAPTURES: 'false', JOB_CONCURRENCY: '3', ASYNC_MAX_QUEUED_PER_ACCOUNT: '50' });
  });

  it('reads the self-hosted signing secret from an existing Secret, and only in self-hosted mode', () => {
    const sets = ['api.asyncCaptures.signingSecret.existingSecret=hooks'];
    const selfHosted = apiEnv(['api.mode=self-hosted', 'operator.enabled=false', ...sets]).find((entry) => entry.name === 'WEBHOOK_SIGNING_SECRET');
    expect(selfHosted?.valueFrom).to.deep.equal({ secretKeyRef: { name: 'hooks', key: 'webhookSigningSecret' } });
    expect(apiEnv(sets).find((entry) => entry.name === 'WEBHOOK_SIGNING_SECRET')).to.equal(undefined);
  });

  it('refuses values outside the schema', () => {
    const { status, output } = helm(['template', 'vf', CHART, '--set', 'api.asyncCaptures.sharePercent=0']);
    expect(status).to.not.equal(0);
    expect(output).to.match(/sharePercent/);
  });
});

/**
 * Self-hosted replicas keep asynchronous captures in their own DATA_DIR unless they share MongoDB: a
 * status read through the Service could then land on a pod that never saw the capture. The chart
 * turns them off there (auto), refuses true, and says so in NOTES.txt.
 */
describe('chart: asynchronous captures with several self-hosted API replicas', () => {
  const SELF_HOSTED = ['api.mode=self-hosted', 'operator.enabled=false'];
  const NO_MONGODB = [...SELF_HOSTED, 'mongodb.enabled=false'];
  const EXTERNAL = [...SELF_HOSTED, 'mongodb.enabled=false', 'mongodb.external.existingSecret=shared-mongodb'];
  const byName = (env: Env[], name: string) => env.find((entry) => entry.name === name);

  it('turns them off (auto) for 2 replicas without MongoDB, and NOTES.txt says why, what POST /captures answers and how to turn them on', () => {
    const env = apiEnv([...NO_MONGODB, 'api.replicas=2']);
    expect(plain(env)).to.include({ ASYNC_CAPTURES: 'false', DATA_DIR: '/var/lib/viewfinder' });
    expect(byName(env, 'MONGODB_URI')).to.equal(undefined);
    const text = notes([...NO_MONGODB, 'api.replicas=2']);
    expect(text).to.include('Asynchronous captures are OFF: 2 self-hosted API replicas without MongoDB');
    expect(text).to.include('POST /captures answers 503');
    expect(text).to.include('mongodb.external.existingSecret');
  });

  it('refuses api.asyncCaptures.enabled=true for 2 replicas without MongoDB, naming the ways out', () => {
    const { status, output } = helm(['template', 'vf', CHART, ...[...NO_MONGODB, 'api.replicas=2', 'api.asyncCaptures.enabled=true'].flatMap((set) => ['--set', set])]);
    expect(status).to.not.equal(0);
    expect(output).to.include('api.asyncCaptures.enabled=true with 2 self-hosted API replicas and no MongoDB');
    expect(output).to.include('mongodb.external.existingSecret');
    expect(output).to.include('api.replicas=1');
  });

  it('counts no ReadWriteMany claim on DATA_DIR as a shared job store (SQLite in WAL mode is for one host): off with auto, refused with true', () => {
    const claim = [...NO_MONGODB, 'api.replicas=3', 'api.resultCache.existingClaim=shared-rwx'];
    const deployment = apiDeployment(claim);
    expect(deployment.spec.template.spec.volumes).to.deep.include({ name: 'data', persistentVolumeClaim: { claimName: 'shared-rwx' } });
    expect(plain(deployment.spec.template.spec.containers[0].env)).to.include({ ASYNC_CAPTURES: 'false' });
    const { status, output } = helm(['template', 'vf', CHART, ...[...claim, 'api.asyncCaptures.enabled=true'].flatMap((set) => ['--set', set])]);
    expect(status, output).to.not.equal(0);
    expect(output).to.include('with 3 self-hosted API replicas and no MongoDB');
  });

  it('keeps them on for one replica without MongoDB, in its DATA_DIR, and NOTES.txt says where', () => {
    const env = apiEnv([...NO_MONGODB, 'api.replicas=1']);
    expect(plain(env)).to.include({ ASYNC_CAPTURES: 'true', DATA_DIR: '/var/lib/viewfinder' });
    expect(byName(env, 'MONGODB_URI')).to.equal(undefined);
    expect(notes([...NO_MONGODB, 'api.replicas=1'])).to.include('Asynchronous captures (POST /captures) keep their jobs in DATA_DIR of the one API pod');
  });

  it('keeps them on for 3 replicas on an external MongoDB: MONGODB_URI from its Secret, in every replica', () => {
    const sets = [...EXTERNAL, 'api.replicas=3'];
    const deployment = apiDeployment(sets);
    expect(deployment.spec.replicas).to.equal(3);
    const env = deployment.spec.template.spec.containers[0].env as Env[];
    expect(plain(env)).to.include({ ASYNC_CAPTURES: 'true' });
    expect(byName(env, 'MONGODB_URI')?.valueFrom).to.deep.equal({ secretKeyRef: { name: 'shared-mongodb', key: 'mongodb-uri' } });
    expect(notes(sets)).to.include('Asynchronous captures (POST /captures) keep their jobs in MongoDB, shared by the 3 API replica(s)');
    // true is allowed where the store is shared.
    expect(plain(apiEnv([...sets, 'api.asyncCaptures.enabled=true']))).to.include({ ASYNC_CAPTURES: 'true' });
  });

  it("keeps them on for 2 replicas on the chart's MongoDB, which the API now reads in self-hosted mode too", () => {
    const env = apiEnv([...SELF_HOSTED, 'api.replicas=2']);
    expect(plain(env)).to.include({ ASYNC_CAPTURES: 'true' });
    expect(byName(env, 'MONGODB_URI')?.valueFrom).to.deep.equal({ secretKeyRef: { name: 'vf-viewfinder-mongodb', key: 'mongodb-uri' } });
  });

  it('turns them off with false whatever the store, and never refuses false', () => {
    for (const sets of [[...NO_MONGODB, 'api.replicas=2'], [...EXTERNAL, 'api.replicas=3'], []]) {
      expect(plain(apiEnv([...sets, 'api.asyncCaptures.enabled=false'])), sets.join(' ')).to.include({ ASYNC_CAPTURES: 'false' });
    }
  });

  it('keeps them on in hosted mode, whose store every replica shares, and in the self-hosted example values says they are off', () => {
    expect(plain(apiEnv(['api.replicas=3']))).to.include({ ASYNC_CAPTURES: 'true' });
    const { status, output, stdout } = helm(['template', 'vf', CHART, '-f', `${CHART}ci/self-hosted-values.yaml`, '--show-only', 'templates/api-deployment.yaml']);
    expect(status, output).to.equal(0);
    expect(stdout).to.match(/name: ASYNC_CAPTURES\n\s+value: "false"/);
  });
});
