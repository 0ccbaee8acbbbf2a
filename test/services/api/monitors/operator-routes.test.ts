import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import request from 'supertest';
import { cachedReviewer, kubeTokenReviewer } from '../../../../services/api/src/auth/operator-token.ts';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '../../../support/fake-kube-apiserver.ts';
import { createStubRenderer } from '../../../support/stub-renderer.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * The operator's monitor routes (/api/operator/monitors/{namespace}/{name}): what the PageMonitor
 * controller reconciles through. A trusted ServiceAccount's token (a real TokenReview on the
 * in-process Kubernetes API server) opens them; writes are idempotent and checked as createMonitor's.
 */
describe('operator monitor routes (/api/operator/monitors)', () => {
  let fake: FakeKubeApiServer;
  let hosted: HostedHarness;
  let token: string;
  const path = '/api/operator/monitors/shop/storefront';

  beforeEach(async () => {
    fake = await startFakeKubeApiServer();
    const reviewer = cachedReviewer(kubeTokenReviewer(fake.kubeConfig(), 'viewfinder-api'), 10_000);
    hosted = await startHosted({
      env: { OPERATOR_SERVICE_ACCOUNTS: 'viewfinder/viewfinder-operator' },
      tokenReviewer: reviewer,
      renderer: createStubRenderer({ capacity: 1, delayMs: () => 0 }),
      monitors: true,
    });
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const answer = await core.createNamespacedServiceAccountToken({ namespace: 'viewfinder', name: 'viewfinder-operator', body: { spec: { audiences: ['viewfinder-api'] } } });
    token = answer.status?.token as string;
  });
  afterEach(async () => {
    await hosted.close();
    await fake.close();
  });

  const as = (bearer: string | undefined) => {
    const agent = request(hosted.app.callback());
    const auth = (test: request.Test) => (bearer === undefined ? test : test.set('Authorization', `Bearer ${bearer}`));
    return {
      get: (url: string) => auth(agent.get(url)),
      put: (url: string, body: object) => auth(agent.put(url)).set('Content-Type', 'application/json').send(body),
      delete: (url: string) => auth(agent.delete(url)),
    };
  };
  const body = (overrides: Record<string, unknown> = {}) => ({
    accountId: hosted.account.id,
    uid: 'uid-1',
    schedule: '*/5 * * * *',
    compare: { threshold: 0.01 },
    pages: [{ name: 'home', url: 'https://shop.example/' }],
    ...overrides,
  });

  it('creates the monitor owned by the PageMonitor, then answers the same one for the same spec', async () => {
    const created = await as(token).put(path, body());
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.deep.include({
      accountId: hosted.account.id,
      name: 'storefront',
      schedule: '*/5 * * * *',
      compare: { threshold: 0.01, baseline: 'accepted', pixelTolerance: 0.1 },
      managedBy: { kind: 'PageMonitor', namespace: 'shop', name: 'storefront', uid: 'uid-1' },
      lastRun: null,
    });
    const again = await as(token).put(path, body());
    expect(again.status).to.equal(200);
    expect(again.body.id).to.equal(created.body.id);
    expect((await hosted.store.getMonitor(created.body.id))?.generation, 'nothing changed, nothing written').to.equal(1);
    const changed = await as(token).put(path, body({ compare: { threshold: 0.2 } }));
    expect(changed.body.compare.threshold).to.equal(0.2);
    expect((await as(token).get(path)).body.id).to.equal(created.body.id);
  });

  it('answers the last run for the status', async () => {
    const created = (await as(token).put(path, body())).body;
    const finishedAt = new Date('2026-01-01T10:00:00Z');
    await hosted.store.recordMonitorRun({
      monitorId: created.id,
      trigger: 'schedule',
      scheduledAt: finishedAt,
      startedAt: finishedAt,
      finishedAt,
      pages: [{ page: 'home', outcome: 'changed', diffRatio: 0.3, regions: [], captureImageId: null, diffImageId: null, baselineImageId: null, error: null, report: null, verdict: null, journey: null }],
    });
    const { lastRun } = (await as(token).get(path)).body;
    expect(lastRun).to.deep.include({ finishedAt: '2026-01-01T10:00:00.000Z' });
    expect(lastRun.pages[0]).to.deep.include({ page: 'home', outcome: 'changed', diffRatio: 0.3 });
  });

  it('starts a new monitor for a resource created again (a new uid), and deletes idempotently', async () => {
    const first = (await as(token).put(path, body())).body;
    const second = await as(token).put(path, body({ uid: 'uid-2' }));
    expect(second.status).to.equal(201);
    expect(second.body.id).to.not.equal(first.id);
    expect(await hosted.store.getMonitor(first.id)).to.equal(null);
    expect((await as(token).delete(path)).body).to.deep.equal({ deleted: second.body.id });
    expect((await as(token).delete(path)).body).to.deep.equal({ deleted: null });
    expect((await as(token).get(path)).status).to.equal(404);
  });

  it('refuses another account (409), an unknown account (404) and a spec the API refuses (400), making nothing', async () => {
    await as(token).put(path, body());
    const other = await hosted.store.createAccount({ name: 'Other' });
    expect((await as(token).put(path, body({ accountId: other.id }))).status).to.equal(409);
    expect((await as(token).put('/api/operator/monitors/shop/other', body({ accountId: 'acct_missing' }))).status).to.equal(404);
    const never = await as(token).put('/api/operator/monitors/shop/never', body({ schedule: '0 0 31 2 *' }));
    expect(never.status).to.equal(400);
    expect(never.body.error).to.match(/never fires/);
    expect((await hosted.store.listMonitors(hosted.account.id)).map((monitor) => monitor.name)).to.deep.equal(['storefront']);
  });

  it('refuses a caller without a trusted ServiceAccount token', async () => {
    for (const bearer of [undefined, 'garbage', hosted.fullKey]) expect((await as(bearer).put(path, body())).status).to.equal(401);
    expect(await hosted.store.listMonitors(hosted.account.id)).to.deep.equal([]);
  });
});
