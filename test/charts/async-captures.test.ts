import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { loadCapturesConfig } from '../../services/api/src/captures/config.ts';
import { helm } from '../support/k8s-tools.ts';
import { CHART } from './chart.ts';

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };

/** The API container's environment as `helm template` renders it with these --set values. */
function apiEnv(sets: string[]): Env[] {
  const { status, output, stdout } = helm(['template', 'vf', CHART, '--namespace', 'viewfinder', ...sets.flatMap((set) => ['--set', set])]);
  expect(status, output).to.equal(0);
  const api = parseAllDocuments(stdout)
    .map((document) => document.toJS())
    .find((manifest) => manifest?.kind === 'Deployment' && manifest.metadata.labels?.['app.kubernetes.io/component'] === 'api');
  return api.spec.template.spec.containers[0].env as Env[];
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
