import { expect } from 'chai';
import { ConfigError } from '../../../../lib/env.ts';
import { minimumRetrySpanMs } from '../../../../lib/jobs/retry.ts';
import { loadCapturesConfig } from '../../../../services/api/src/captures/config.ts';

describe('asynchronous captures configuration', () => {
  it('defaults to a bounded share, a queued bound, 24 h of results and webhook retries over more than an hour', () => {
    const config = loadCapturesConfig({});
    expect(config).to.deep.include({ enabled: true, concurrency: 8, sharePercent: 50, leaseMs: 30_000, maxQueuedPerOwner: 1000, resultTtlMs: 86_400_000, selfHostedSigningSecret: undefined });
    expect(config.capture).to.deep.equal({ maxAttempts: 3, baseDelayMs: 5000, maxDelayMs: 300_000 });
    expect(config.webhook).to.deep.include({ maxAttempts: 12, baseDelayMs: 30_000, maxDelayMs: 3_600_000, timeoutMs: 10_000 });
    expect(minimumRetrySpanMs(config.webhook)).to.be.greaterThan(2.5 * 3_600_000);
  });

  it('refuses a self-hosted signing secret shorter than 32 characters, and values out of range', () => {
    expect(() => loadCapturesConfig({ WEBHOOK_SIGNING_SECRET: 'short' })).to.throw(ConfigError, /at least 32 characters/);
    expect(loadCapturesConfig({ WEBHOOK_SIGNING_SECRET: 'x'.repeat(32) }).selfHostedSigningSecret).to.equal('x'.repeat(32));
    expect(() => loadCapturesConfig({ ASYNC_CAPTURE_SHARE_PERCENT: '0' })).to.throw(ConfigError);
    expect(() => loadCapturesConfig({ ASYNC_CAPTURES: 'maybe' })).to.throw(ConfigError);
  });
});
