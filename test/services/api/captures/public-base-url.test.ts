import { expect } from 'chai';
import { ConfigError } from '../../../../lib/env.ts';
import { webhookBodyOf } from '../../../../services/api/src/captures/webhook-job.ts';
import { readPublicBaseUrl } from '../../../../services/api/src/public-base-url.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/** Absolute URLs come from PUBLIC_BASE_URL: a caller's Host header never makes the service point elsewhere. */
describe('absolute URLs come from PUBLIC_BASE_URL, never from the Host header', function () {
  this.timeout(60_000);
  let fixtures: FixtureServer;
  let hosted: HostedHarness;
  before(async () => {
    fixtures = await startFixtureServer();
    hosted = await startHosted({ captures: true, env: { PUBLIC_BASE_URL: 'https://shots.example.com/' } });
  });
  after(async () => {
    await hosted.close();
    await fixtures.close();
  });

  it('gives statusUrl, Location and the webhook\'s imageUrl and statusUrl on PUBLIC_BASE_URL when the request names another host', async () => {
    const site = await hosted.store.createSite({ accountId: hosted.account.id, name: 's', allowedDomains: [] });
    const answer = await hosted.api(hosted.fullKey).post('/api/captures', { url: fixtures.url('/geometry'), site_id: site.id }).set('Host', 'attacker.example');
    expect(answer.status).to.equal(202);
    const expected = `https://shots.example.com/api/captures/${answer.body.id}`;
    expect(answer.body.statusUrl).to.equal(expected);
    expect(answer.headers.location).to.equal(expected);
    expect((await hosted.api(hosted.fullKey).get(`/api/captures/${answer.body.id}`).set('Host', 'other.example')).body.statusUrl).to.equal(expected);
    const job = (await hosted.store.getJob(answer.body.id))!;
    const webhook = webhookBodyOf({ ...job, state: 'succeeded' });
    expect([webhook.imageUrl, webhook.statusUrl]).to.deep.equal([expected, expected]);
  });

  it('defaults to http://localhost:PORT and refuses what is not a plain http(s) base URL', () => {
    expect(readPublicBaseUrl({})).to.equal('http://localhost:3000');
    expect(readPublicBaseUrl({ PORT: '8080' })).to.equal('http://localhost:8080');
    expect(readPublicBaseUrl({ PUBLIC_BASE_URL: 'https://example.com/viewfinder/' })).to.equal('https://example.com/viewfinder');
    for (const bad of ['example.com', 'ftp://example.com', 'https://user:pw@example.com', 'https://example.com/?a=1']) {
      expect(() => readPublicBaseUrl({ PUBLIC_BASE_URL: bad }), bad).to.throw(ConfigError, /PUBLIC_BASE_URL/);
    }
  });
});
