import { expect } from 'chai';
import { apiRegistry } from '../../services/api/src/metrics.ts';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { sampleValue } from '../support/renderer-service.ts';
import { startHosted, type HostedHarness } from '../services/api/hosted/support.ts';

const count = async (name: string, labels: Record<string, string> = {}) => (await sampleValue(apiRegistry, name, labels)) ?? 0;

describe('hosted-mode metrics: auth failures by reason, rate limits', () => {
  let fixtures: FixtureServer;
  let hosted: HostedHarness;
  before(async () => {
    fixtures = await startFixtureServer();
    hosted = await startHosted({ env: { RATE_LIMIT_PER_MINUTE: '1' } });
  });
  after(async () => {
    await hosted.close();
    await fixtures.close();
  });

  it('counts a missing key, an invalid key, a missing site_id and a domain outside the allowed ones, each by its reason', async () => {
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 's', allowedDomains: ['example.com'] });
    const { secret: restricted } = await hosted.store.createKey({ accountId: hosted.account.id, name: 'r', kind: 'site', siteId: site.id, restrictDomains: true });
    const before = {
      missing_key: await count('viewfinder_auth_failures_total', { reason: 'missing_key' }),
      invalid_key: await count('viewfinder_auth_failures_total', { reason: 'invalid_key' }),
      site_required: await count('viewfinder_auth_failures_total', { reason: 'site_required' }),
      domain_forbidden: await count('viewfinder_auth_failures_total', { reason: 'domain_forbidden' }),
    };
    const body = { url: fixtures.url('/simple') };
    expect((await hosted.api().post('/api/screenshot', body)).status).to.equal(401);
    expect((await hosted.api('vf_not_a_real_key_000000000000000000').post('/api/screenshot', body)).status).to.equal(401);
    expect((await hosted.api(hosted.fullKey).post('/api/screenshot', body)).status).to.equal(400);
    expect((await hosted.api(restricted).post('/api/screenshot', body)).status).to.equal(403);
    for (const [reason, value] of Object.entries(before)) {
      expect(await count('viewfinder_auth_failures_total', { reason }), reason).to.equal(value + 1);
    }
  });

  it('counts a request refused by the rate limiter', async () => {
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 'rl', allowedDomains: [] });
    const before = await count('viewfinder_rate_limited_total');
    const body = { url: fixtures.url('/simple'), site_id: site.id };
    expect((await hosted.api(hosted.fullKey).post('/api/screenshot', body)).status).to.equal(200);
    expect((await hosted.api(hosted.fullKey).post('/api/screenshot', body)).status).to.equal(429);
    expect(await count('viewfinder_rate_limited_total')).to.equal(before + 1);
  });
});
