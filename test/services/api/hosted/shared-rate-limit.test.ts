import { expect } from 'chai';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../../../support/processes.ts';
import { forEachStoreBackend, type TestStore } from '../../../support/store-backends.ts';
import { startStubRenderer, type StubRendererService } from '../../../support/stub-renderer.ts';

/**
 * Two API processes (MODE=hosted) on one store (one DATA_DIR, or one MongoDB database), as two
 * replicas: a key's per-minute limit holds across both. The renderer is a stub: what is counted is
 * admission, not Chromium.
 */
forEachStoreBackend('rate limits shared by two API processes on one store', function (backend) {
  this.timeout(120_000);
  let shared: TestStore;
  let renderer: StubRendererService;
  const apis: ServiceProcess[] = [];

  before(async () => {
    renderer = await startStubRenderer({ capacity: 32, delayMs: () => 5 });
  });
  after(() => renderer.close());
  beforeEach(async () => {
    shared = await backend.create();
  });
  afterEach(async () => {
    await Promise.all(apis.splice(0).map((api) => api.stop()));
    await shared.dispose();
  });

  it('allows exactly the limit per key across both processes, not twice it', async () => {
    const { store } = shared;
    const account = await store.createAccount({ name: 'Acme', rateLimitPerMinute: 7 });
    const site = await store.createSite({ accountId: account.id, name: 'shop', allowedDomains: [] });
    const { secret } = await store.createKey({ accountId: account.id, name: 'ci', kind: 'site', siteId: site.id });
    const other = await store.createKey({ accountId: account.id, name: 'other', kind: 'site', siteId: site.id });

    const env = { MODE: 'hosted', ...shared.env, RENDERER_URL: renderer.url, PRIVATE_NETWORK_ALLOWLIST: '127.0.0.0/8' };
    apis.push(...(await Promise.all([startServiceProcess(API_MAIN, env), startServiceProcess(API_MAIN, env)])));
    const capture = (api: ServiceProcess, key: string) =>
      fetch(`${api.base}/api/screenshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/page' }),
      }).then(async (response) => ({ status: response.status, remaining: response.headers.get('ratelimit-remaining') }));

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => capture(apis[i % 2]!, secret)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200), JSON.stringify(statuses)).to.have.length(7);
    expect(statuses.filter((s) => s === 429)).to.have.length(13);
    const remaining = answers.filter((a) => a.status === 200).map((a) => Number(a.remaining));
    expect(remaining.sort()).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);

    // Another key of the same account has its own budget.
    expect((await capture(apis[1]!, other.secret)).status).to.equal(200);
  });
});
