import { expect } from 'chai';
import { ConfigError } from '../../lib/env.ts';
import { loadOperatorConfig } from '../../operator/src/config.ts';

describe('operator config', () => {
  it('watches every namespace by default, serves probes on 8081, and reaches the API with TokenRequests for its ServiceAccount', () => {
    const config = loadOperatorConfig({ POD_NAME: 'operator-0' });
    expect(config.watchNamespaces).to.deep.equal([]);
    expect(config.port).to.equal(8081);
    expect(config.api.url.href).to.equal('http://localhost:3000/');
    expect({ ...config.api, url: undefined }).to.deep.equal({
      url: undefined,
      timeoutMs: 10_000,
      audience: 'viewfinder-api',
      tokenFile: undefined,
      serviceAccount: { namespace: 'default', name: 'viewfinder-operator' },
    });
    expect(config).not.to.have.property('store');
    expect(config.leaderElection).to.deep.equal({
      enabled: true,
      leaseName: 'viewfinder-operator',
      leaseNamespace: 'default',
      identity: 'operator-0',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      // Set by the chart (LEASE_OWNER_DEPLOYMENT); outside it, the Lease has no owner.
      ownerDeployment: undefined,
    });
    expect(config.resyncMs).to.equal(300_000);
    expect(config.monitorStatusIntervalMs).to.equal(30_000);
  });

  it('reads a comma-separated WATCH_NAMESPACE and keeps the Lease in the one watched namespace', () => {
    expect(loadOperatorConfig({ WATCH_NAMESPACE: 'shop, blog' }).watchNamespaces).to.deep.equal(['shop', 'blog']);
    expect(loadOperatorConfig({ WATCH_NAMESPACE: 'shop' }).leaderElection.leaseNamespace).to.equal('shop');
    expect(loadOperatorConfig({ WATCH_NAMESPACE: 'shop', POD_NAMESPACE: 'viewfinder' }).leaderElection.leaseNamespace).to.equal('viewfinder');
  });

  it('reads no store setting: MONGODB_URI and DATA_DIR change nothing', () => {
    const flatten = (env: Record<string, string>) => JSON.stringify(loadOperatorConfig({ POD_NAME: 'operator-0', ...env }));
    expect(flatten({ MONGODB_URI: 'mongodb://db/viewfinder', DATA_DIR: '/data' })).to.equal(flatten({}));
  });

  it('reads the API URL, its token file in a pod, and the ServiceAccount in its namespace outside one', () => {
    const inPod = loadOperatorConfig({ API_URL: 'http://viewfinder-api.viewfinder:3000', API_TOKEN_FILE: '/var/run/secrets/viewfinder.dev/api/token', POD_NAMESPACE: 'viewfinder' });
    expect(inPod.api.url.href).to.equal('http://viewfinder-api.viewfinder:3000/');
    expect(inPod.api.tokenFile).to.equal('/var/run/secrets/viewfinder.dev/api/token');
    expect(inPod.api.serviceAccount).to.deep.equal({ namespace: 'viewfinder', name: 'viewfinder-operator' });
    expect(loadOperatorConfig({ OPERATOR_SERVICE_ACCOUNT: 'ops/vf', API_TOKEN_AUDIENCE: 'shots' }).api).to.deep.include({ audience: 'shots', serviceAccount: { namespace: 'ops', name: 'vf' } });
  });

  it('refuses an API_URL that is not http(s) or carries credentials, and a ServiceAccount that is not namespace/name', () => {
    expect(() => loadOperatorConfig({ API_URL: 'ftp://api' })).to.throw(ConfigError, /API_URL/);
    expect(() => loadOperatorConfig({ API_URL: 'http://user:pw@api' })).to.throw(ConfigError, /credentials/);
    expect(() => loadOperatorConfig({ OPERATOR_SERVICE_ACCOUNT: 'viewfinder-operator' })).to.throw(ConfigError, /OPERATOR_SERVICE_ACCOUNT/);
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

  it('reads how often PageMonitor status is refreshed, from 1 s to an hour', () => {
    expect(loadOperatorConfig({ MONITOR_STATUS_INTERVAL_SECONDS: '5' }).monitorStatusIntervalMs).to.equal(5_000);
    expect(() => loadOperatorConfig({ MONITOR_STATUS_INTERVAL_SECONDS: '0' })).to.throw(ConfigError, /MONITOR_STATUS_INTERVAL_SECONDS/);
    expect(() => loadOperatorConfig({ MONITOR_STATUS_INTERVAL_SECONDS: '3601' })).to.throw(ConfigError, /MONITOR_STATUS_INTERVAL_SECONDS/);
  });
});
