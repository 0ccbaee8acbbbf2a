import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { PermanentJobError } from '../../../../lib/jobs/retry.ts';
import { parseNetworkAllowlist } from '../../../../lib/network-allowlist.ts';
import { deliverWebhook } from '../../../../services/api/src/captures/webhook-delivery.ts';
import { createNetworkGuard, type Lookup } from '../../../../services/renderer/src/guard/network-guard.ts';
import { startSecretServer, type SecretServer } from '../../../support/secret-server.ts';
import { startWebhookReceiver } from '../../../support/webhook-receiver.ts';
import { startHosted, type HostedHarness } from '../hosted/support.ts';

/**
 * The webhook target passes the capture guard: the same spellings of loopback that the capture
 * guard's suite tries (network-guard.test.ts), the private, link-local, metadata and other
 * non-public ranges, a name that resolves to one of them, DNS rebinding and redirects. A "secret"
 * service on 127.0.0.1 counts every connection: it must see none.
 */
describe('webhook targets pass the network guard', function () {
  this.timeout(30_000);
  let secret: SecretServer;
  before(async () => {
    secret = await startSecretServer();
  });
  after(() => secret.close());
  beforeEach(() => secret.reset());

  // The capture guard suite's spellings of 127.0.0.1, then the other classes of non-public address.
  const LOOPBACK_SPELLINGS = ['127.0.0.1', 'localhost', 'app.localhost', 'LOCALHOST.', '2130706433', '0177.0.0.1', '0x7f.1', '0x7f000001', '127.1', '127.0.0.1.', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::127.0.0.1]', '[::1]'];
  const OTHER_PRIVATE = ['10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '192.0.2.1', '224.0.0.1', '[fd00::1]', '[fe80::1]', '[::]', '[::ffff:10.0.0.1]', '[64:ff9b::a00:1]', 'metadata.internal.test'];
  const MATRIX = [...LOOPBACK_SPELLINGS, ...OTHER_PRIVATE];
  // A name only the injected resolver knows: it answers the cloud metadata address.
  const testLookup: Lookup = async (hostname) => (hostname === 'metadata.internal.test' ? [{ address: '169.254.169.254', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
  const noAllowlist = () => createNetworkGuard(parseNetworkAllowlist([]), testLookup);
  const deliver = (guard: ReturnType<typeof createNetworkGuard>, url: string, timeoutMs = 2000) =>
    deliverWebhook(guard, { url, body: '{}', headers: {}, timeoutMs }).then(
      () => undefined,
      (err: unknown) => err,
    );

  describe('at delivery, when the connection is made', () => {
    for (const host of MATRIX) {
      it(`refuses ${host} for good, without connecting`, async () => {
        const err = await deliver(noAllowlist(), `http://${host}:${secret.port}/hook`);
        expect(err).to.be.instanceOf(PermanentJobError);
        expect((err as Error).message).to.match(/^webhook target refused: Forbidden: .* (is|resolves to) a [a-z0-9-]+ address; only public addresses may receive webhooks/);
        expect(secret.hits()).to.equal(0);
      });
    }

    it('delivers to a loopback target that PRIVATE_NETWORK_ALLOWLIST allows (the positive control)', async () => {
      const guard = createNetworkGuard(parseNetworkAllowlist(['127.0.0.1']));
      expect(await deliver(guard, `http://127.0.0.1:${secret.port}/hook`)).to.equal(undefined);
      expect(secret.hits()).to.equal(1);
    });

    it('connects to the address it checked, never asking DNS again: a name only the checked answer knows is reached', async () => {
      const receiver = await startWebhookReceiver();
      try {
        const guard = createNetworkGuard(parseNetworkAllowlist(['127.0.0.1']), async () => [{ address: '127.0.0.1', family: 4 }]);
        // No resolver but the guard's knows this name: a second lookup at connect time would fail.
        expect(await deliver(guard, `http://hooks.viewfinder.invalid:${receiver.port}/hook`)).to.equal(undefined);
        expect(receiver.deliveries).to.have.length(1);
        expect(receiver.deliveries[0]!.headers.host).to.equal(`hooks.viewfinder.invalid:${receiver.port}`);
      } finally {
        await receiver.close();
      }
    });

    it('never reaches inside through DNS rebinding: a name that answers a public address, then a private one', async () => {
      const answers = ['93.184.216.34', '127.0.0.1'];
      const lookups: string[] = [];
      const rebinding: Lookup = async () => {
        const address = answers.shift() ?? '127.0.0.1';
        lookups.push(address);
        return [{ address, family: 4 }];
      };
      // The first delivery is checked against the public answer and goes to exactly that address
      // (which this sandbox cannot reach, or which is not the secret); the second gets the private answer and is refused.
      const first = await deliver(createNetworkGuard(parseNetworkAllowlist([]), rebinding), `http://rebind.viewfinder.invalid:${secret.port}/hook`, 1000);
      expect(first).to.be.instanceOf(Error).and.not.instanceOf(PermanentJobError);
      const second = await deliver(createNetworkGuard(parseNetworkAllowlist([]), rebinding), `http://rebind.viewfinder.invalid:${secret.port}/hook`);
      expect(second).to.be.instanceOf(PermanentJobError);
      expect((second as Error).message).to.match(/resolves to a loopback address/);
      expect(lookups).to.deep.equal(['93.184.216.34', '127.0.0.1']);
      expect(secret.hits()).to.equal(0);
    });

    it('does not follow a redirect: a 3xx is a failed delivery, and its target is never asked', async () => {
      const redirecting = http.createServer((_req, res) => {
        res.writeHead(307, { Location: `http://127.0.0.1:${secret.port}/hook` });
        res.end();
      });
      await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.2', resolve));
      try {
        const guard = createNetworkGuard(parseNetworkAllowlist(['127.0.0.2']));
        const err = await deliver(guard, `http://127.0.0.2:${(redirecting.address() as AddressInfo).port}/hook`);
        expect(err).to.be.instanceOf(Error).and.not.instanceOf(PermanentJobError);
        expect((err as Error).message).to.equal('webhook receiver answered 307 (redirects are not followed)');
        expect(secret.hits()).to.equal(0);
      } finally {
        await new Promise((resolve) => redirecting.close(resolve));
      }
    });
  });

  describe('at submit, before anything is queued', () => {
    let hosted: HostedHarness;
    let siteId: string;
    before(async () => {
      hosted = await startHosted({ env: { PRIVATE_NETWORK_ALLOWLIST: '' }, captures: true, lookup: testLookup });
      siteId = (await hosted.store.createSite({ accountId: hosted.account.id, name: 's', allowedDomains: [] })).id;
    });
    after(() => hosted.close());

    it('answers 503 with Retry-After, and queues nothing, when the webhook target\'s name gets no DNS answer within WEBHOOK_TIMEOUT_MS', async () => {
      const silentDns: Lookup = (hostname) => (hostname === 'silent.viewfinder.test' ? new Promise(() => undefined) : testLookup(hostname));
      const slow = await startHosted({ env: { PRIVATE_NETWORK_ALLOWLIST: '', WEBHOOK_TIMEOUT_MS: '200' }, captures: true, lookup: silentDns });
      try {
        const site = await slow.store.createSite({ accountId: slow.account.id, name: 's', allowedDomains: [] });
        const response = await slow.api(slow.fullKey).post('/api/captures', { url: 'http://example.com/', site_id: site.id, webhookUrl: 'http://silent.viewfinder.test/hook' });
        expect(response.status).to.equal(503);
        expect(response.headers['retry-after']).to.equal('1');
        expect(response.body).to.deep.equal({ success: false, error: 'webhookUrl: silent.viewfinder.test did not resolve within 200 ms; try again' });
        expect(await slow.store.countJobs({ states: ['queued', 'running', 'succeeded', 'failed'] })).to.equal(0);
      } finally {
        await slow.close();
      }
    });

    for (const host of MATRIX) {
      it(`answers 403 for a webhookUrl on ${host}`, async () => {
        const response = await hosted.api(hosted.fullKey).post('/api/captures', { url: 'http://example.com/', site_id: siteId, webhookUrl: `http://${host}:${secret.port}/hook` });
        expect(response.status, JSON.stringify(response.body)).to.equal(403);
        expect(response.body.error).to.match(/^webhookUrl: Forbidden: .*only public addresses may receive webhooks/);
        expect(await hosted.store.countJobs({ states: ['queued', 'running', 'succeeded', 'failed'] })).to.equal(0);
      });
    }
  });
});
