import { expect } from 'chai';
import { ConfigError } from '../../lib/env.ts';
import { loadOperatorConfig } from '../../operator/src/config.ts';

describe('operator config', () => {
  it('watches every namespace by default, serves probes on 8081, and reads the store like the API does', () => {
    const config = loadOperatorConfig({ POD_NAME: 'operator-0' });
    expect(config.watchNamespaces).to.deep.equal([]);
    expect(config.port).to.equal(8081);
    expect(config.store).to.deep.equal({ backend: 'sqlite', dataDir: 'data', busyTimeoutMs: 5000 });
    expect(config.leaderElection).to.deep.equal({
      enabled: true,
      leaseName: 'viewfinder-operator',
      leaseNamespace: 'default',
      identity: 'operator-0',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    expect(config.resyncMs).to.equal(300_000);
  });

  it('reads a comma-separated WATCH_NAMESPACE and keeps the Lease in the one watched namespace', () => {
    expect(loadOperatorConfig({ WATCH_NAMESPACE: 'shop, blog' }).watchNamespaces).to.deep.equal(['shop', 'blog']);
    expect(loadOperatorConfig({ WATCH_NAMESPACE: 'shop' }).leaderElection.leaseNamespace).to.equal('shop');
    expect(loadOperatorConfig({ WATCH_NAMESPACE: 'shop', POD_NAMESPACE: 'viewfinder' }).leaderElection.leaseNamespace).to.equal('viewfinder');
  });

  it('uses MongoDB when MONGODB_URI is set', () => {
    expect(loadOperatorConfig({ MONGODB_URI: 'mongodb://db/viewfinder' }).store).to.deep.equal({ backend: 'mongo', mongodbUri: 'mongodb://db/viewfinder' });
  });

  it('refuses a namespace that is not a namespace name', () => {
    expect(() => loadOperatorConfig({ WATCH_NAMESPACE: 'Shop_1' })).to.throw(ConfigError, /WATCH_NAMESPACE/);
  });

  it('refuses lease timings under which two leaders could overlap', () => {
    expect(() => loadOperatorConfig({ LEASE_DURATION_SECONDS: '10', LEASE_RENEW_DEADLINE_SECONDS: '10' })).to.throw(ConfigError, /LEASE_RENEW_DEADLINE_SECONDS/);
    expect(() => loadOperatorConfig({ LEASE_RENEW_DEADLINE_SECONDS: '5', LEASE_RETRY_PERIOD_SECONDS: '5' })).to.throw(ConfigError, /LEASE_RETRY_PERIOD_SECONDS/);
  });

  it('refuses an OPERATOR_PORT out of range', () => {
    expect(() => loadOperatorConfig({ OPERATOR_PORT: '70000' })).to.throw(ConfigError, /OPERATOR_PORT/);
  });
});
