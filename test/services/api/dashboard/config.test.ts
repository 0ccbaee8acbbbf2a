import { expect } from 'chai';
import { ConfigError } from '../../../../lib/env.ts';
import { loadDashboardConfig } from '../../../../services/api/src/dashboard/config.ts';

describe('dashboard config', () => {
  it('defaults to the safe settings: no trusted proxy, no single sign-on, 30 min idle, 12 h absolute', () => {
    const config = loadDashboardConfig({});
    expect(config).to.include({ trustProxy: false, sso: undefined, sessionIdleMs: 30 * 60_000, sessionMaxMs: 12 * 3_600_000, signInLimitPerAccount: 5, signInLimitPerAddress: 30 });
  });

  it('refuses single sign-on without a proof that requests came through the proxy', () => {
    expect(() => loadDashboardConfig({ DASHBOARD_SSO_EMAIL_HEADER: 'X-Forwarded-Email' })).to.throw(ConfigError, /needs DASHBOARD_SSO_SECRET or DASHBOARD_SSO_TRUSTED_SOURCES/);
    expect(() => loadDashboardConfig({ DASHBOARD_SSO_EMAIL_HEADER: 'X-Forwarded-Email', DASHBOARD_SSO_SECRET: 'short' })).to.throw(ConfigError, /at least 16/);
    expect(() => loadDashboardConfig({ DASHBOARD_SSO_SECRET: 'a-long-enough-secret' })).to.throw(ConfigError, /need DASHBOARD_SSO_EMAIL_HEADER/);
  });

  it('reads trusted sources as addresses and CIDRs, and refuses anything else', () => {
    const sso = loadDashboardConfig({ DASHBOARD_SSO_EMAIL_HEADER: 'X-Forwarded-Email', DASHBOARD_SSO_TRUSTED_SOURCES: '10.0.0.0/8, ::1' }).sso;
    expect(sso?.emailHeader).to.equal('x-forwarded-email');
    expect(sso?.trustedSources?.check('10.1.2.3', 'ipv4')).to.equal(true);
    expect(sso?.trustedSources?.check('11.0.0.1', 'ipv4')).to.equal(false);
    expect(sso?.trustedSources?.check('::1', 'ipv6')).to.equal(true);
    expect(() => loadDashboardConfig({ DASHBOARD_SSO_EMAIL_HEADER: 'X', DASHBOARD_SSO_TRUSTED_SOURCES: 'proxy.internal' })).to.throw(ConfigError, /not an IP address or CIDR/);
    expect(() => loadDashboardConfig({ DASHBOARD_SSO_EMAIL_HEADER: 'X', DASHBOARD_SSO_TRUSTED_SOURCES: '10.0.0.0/33' })).to.throw(ConfigError);
  });
});
