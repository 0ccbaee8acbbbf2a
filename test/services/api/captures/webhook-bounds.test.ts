import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PermanentJobError } from '../../../../lib/jobs/retry.ts';
import { createJobRunner, type JobRunner } from '../../../../lib/jobs/runner.ts';
import { parseNetworkAllowlist } from '../../../../lib/network-allowlist.ts';
import { openSqliteStore } from '../../../../lib/store/sqlite.ts';
import type { Store } from '../../../../lib/store/store.ts';
import { CAPTURE_JOB } from '../../../../services/api/src/captures/capture-job.ts';
import { loadCapturesConfig } from '../../../../services/api/src/captures/config.ts';
import { deliverWebhook } from '../../../../services/api/src/captures/webhook-delivery.ts';
import { queueWebhook, webhookJobHandler } from '../../../../services/api/src/captures/webhook-job.ts';
import { createNetworkGuard } from '../../../../services/renderer/src/guard/network-guard.ts';
import { expectEventually } from '../../../support/eventually.ts';
import { silentLogger } from '../../../support/harness.ts';

/** A receiver that accepts each delivery and then never finishes its answer: one byte every 20 ms, of its body or of a header. */
async function startTricklingReceiver(options: { headersFirst: boolean }) {
  const open = new Set<NodeJS.Timeout>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    if (options.headersFirst) res.writeHead(200, { 'Content-Type': 'text/plain' });
    else res.socket?.write('HTTP/1.1 200 OK\r\nX-Slow: ');
    const timer = setInterval(() => (options.headersFirst ? res.write('.') : res.socket?.write('a')), 20);
    open.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      open.delete(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    requests: () => requests,
    close: () => {
      open.forEach(clearInterval);
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('webhook deliveries are bounded', function () {
  this.timeout(30_000);
  const loopback = () => createNetworkGuard(parseNetworkAllowlist(['127.0.0.1']), async () => [{ address: '127.0.0.1', family: 4 }]);

  for (const headersFirst of [true, false]) {
    it(`ends an attempt at its overall deadline when the receiver trickles ${headersFirst ? 'its body' : 'its status line'} (never idle)`, async () => {
      const receiver = await startTricklingReceiver({ headersFirst });
      try {
        const outcome = await deliverWebhook(loopback(), { url: `http://127.0.0.1:${receiver.port}/hook`, body: '{}', headers: {}, timeoutMs: 300 }).then(
          () => 'delivered',
          (err: unknown) => err,
        );
        expect(outcome).to.be.instanceOf(Error).and.not.instanceOf(PermanentJobError);
        expect((outcome as Error).message).to.equal('webhook receiver did not finish its answer within 300 ms (connection, headers and body together)');
      } finally {
        await receiver.close();
      }
    });
  }

  describe('in the job runner', () => {
    let dataDir: string;
    let store: Store;
    let runner: JobRunner;
    beforeEach(() => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-webhook-bounds-'));
      store = openSqliteStore({ dataDir });
    });
    afterEach(async () => {
      await runner?.stop(100);
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** A finished self-hosted capture whose webhook goes to `webhookUrl`. */
    async function finishedCapture(webhookUrl: string) {
      const { job } = await store.enqueueJob({ type: CAPTURE_JOB, ownerId: 'self-hosted', payload: { request: { url: 'https://example.com/' }, statusBase: 'https://vf.example/captures', webhookUrl }, maxAttempts: 1 });
      const claimed = await store.claimJob([CAPTURE_JOB], 'setup', 60_000);
      expect(claimed?.id).to.equal(job.id);
      await store.failJob(job.id, 'setup', 'boom', { expiresAt: new Date(Date.now() + 60_000) });
      return (await store.getJob(job.id))!;
    }

    it('keeps slots for everything else while eight receivers on one host hang: at most WEBHOOK_CONCURRENCY_PER_HOST go to that host, other hosts and captures still run', async () => {
      const slow = await startTricklingReceiver({ headersFirst: true });
      let fastDeliveries = 0;
      const fast = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          fastDeliveries++;
          res.end();
        });
      });
      await new Promise<void>((resolve) => fast.listen(0, '127.0.0.1', resolve));
      let capturesRun = 0;
      try {
        const config = loadCapturesConfig({ JOB_CONCURRENCY: '8', WEBHOOK_SIGNING_SECRET: 'x'.repeat(32), WEBHOOK_TIMEOUT_MS: '60000' });
        expect(config.webhook).to.deep.include({ concurrency: 4, concurrencyPerHost: 2 });
        runner = createJobRunner({ store, logger: silentLogger, concurrency: config.concurrency, leaseMs: 60_000, pollIntervalMs: 25 });
        const guard = createNetworkGuard(parseNetworkAllowlist(['127.0.0.1']), async () => [{ address: '127.0.0.1', family: 4 }]);
        runner.register(webhookJobHandler({ store, config, guard }));
        runner.register({ type: 'other-work', retry: config.capture, retentionMs: 60_000, run: async () => ((capturesRun += 1), { result: null }) });
        for (let i = 0; i < 8; i++) await queueWebhook(runner, await finishedCapture(`http://slow.viewfinder.test:${slow.port}/hook/${i}`), new Date());
        runner.start();
        await expectEventually(async () => expect(slow.requests()).to.equal(2));
        await queueWebhook(runner, await finishedCapture(`http://fast.viewfinder.test:${(fast.address() as AddressInfo).port}/hook`), new Date());
        await runner.enqueue('other-work', 'another-account', {});
        await expectEventually(async () => expect([fastDeliveries, capturesRun]).to.deep.equal([1, 1]));
        expect(slow.requests(), 'the slow host still has exactly its two').to.equal(2);
      } finally {
        await runner.stop(100);
        await slow.close();
        fast.closeAllConnections();
        await new Promise<void>((resolve) => fast.close(() => resolve()));
      }
    });
  });
});
