import { expect } from 'chai';
import { capturedLogger } from '../../../support/captured-logger.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { startHosted, type HostedHarness } from './support.ts';

describe('API keys never reach the logs (hosted)', () => {
  let fixtures: FixtureServer;
  let hosted: HostedHarness;
  let lines: string[];

  before(async () => {
    fixtures = await startFixtureServer();
    const captured = capturedLogger();
    lines = captured.lines;
    hosted = await startHosted({ logger: captured.logger });
  });
  after(async () => {
    await hosted.close();
    await fixtures.close();
  });

  it('logs no key, nor any part of one, across successful, failed, created and regenerated keys', async () => {
    const secrets = [hosted.fullKey];
    const admin = hosted.api(hosted.fullKey);
    const site = await admin.post('/api/sites', { allowedDomains: ['127.0.0.1'] }).expect(201);
    const created = await admin.post('/api/keys', { name: 'widget', siteId: site.body.id, restrictDomains: true }).expect(201);
    secrets.push(created.body.key);

    // Success: a real capture, and management calls.
    await hosted.api(created.body.key).post('/api/screenshot', { url: fixtures.url('/simple') }).expect(200);
    await admin.get('/api/keys').expect(200);
    // Failure: a wrong key of the right shape, a malformed one, one as a bearer token, a domain refusal.
    const wrong = `vf_${'Z'.repeat(43)}`;
    secrets.push(wrong);
    await hosted.api(wrong).get('/api/sites').expect(401);
    await hosted.api('vf_short-and-wrong-secret').get('/api/sites').expect(401);
    secrets.push('vf_short-and-wrong-secret');
    await hosted.api().get('/api/sites').set('Authorization', `Bearer ${created.body.key}x`).expect(401);
    await hosted.api(created.body.key).post('/api/screenshot', { url: 'http://example.com/' }).expect(403);
    // Regeneration: the old key fails afterwards, the new one works.
    const regenerated = await admin.post(`/api/keys/${created.body.id}/regenerate`).expect(200);
    secrets.push(regenerated.body.key);
    await hosted.api(created.body.key).post('/api/screenshot', { url: fixtures.url('/simple') }).expect(401);
    await hosted.api(regenerated.body.key).get('/api/sites').expect(403);
    // A capture with the full-access key.
    await admin.post('/api/screenshot', { url: fixtures.url('/simple'), site_id: site.body.id }).expect(200);

    const log = lines.join('\n');
    // The test must have seen the paths it claims to cover.
    expect(log).to.include('Rejected an invalid API key');
    expect(log).to.include('Authenticated an API key');
    expect(lines.filter((line) => line.includes('Served a request'))).to.have.length.of.at.least(11);
    for (const secret of secrets) {
      expect(log, 'a whole key').to.not.include(secret);
      // Any 12 consecutive characters of the random part would already be a leak.
      for (let start = 3; start + 12 <= secret.length; start++) {
        expect(log, `part of a key: ${secret.slice(start, start + 12)}`).to.not.include(secret.slice(start, start + 12));
      }
    }
    const storedHashes = (await hosted.store.listKeys(hosted.account.id)).map((key) => key.hash);
    for (const hash of storedHashes) expect(log, 'a key hash').to.not.include(hash);
  });
});
