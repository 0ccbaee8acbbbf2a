import { expect } from 'chai';
import { ConfigError } from '../../lib/env.ts';
import { parseNetworkAllowlist } from '../../lib/network-allowlist.ts';

describe('PRIVATE_NETWORK_ALLOWLIST parsing', () => {
  it('allows addresses inside an IPv4 CIDR and nothing outside it', () => {
    const allowlist = parseNetworkAllowlist(['127.0.0.0/8']);
    expect(allowlist.allowsAddress('127.0.0.1')).to.equal(true);
    expect(allowlist.allowsAddress('127.255.255.254')).to.equal(true);
    expect(allowlist.allowsAddress('128.0.0.1')).to.equal(false);
    expect(allowlist.allowsAddress('10.0.0.1')).to.equal(false);
  });

  it('treats a bare address as a single host', () => {
    const allowlist = parseNetworkAllowlist(['127.0.0.2']);
    expect(allowlist.allowsAddress('127.0.0.2')).to.equal(true);
    expect(allowlist.allowsAddress('127.0.0.1')).to.equal(false);
  });

  it('handles IPv6 CIDRs', () => {
    const allowlist = parseNetworkAllowlist(['fd00::/8', '::1']);
    expect(allowlist.allowsAddress('fd12:3456::1')).to.equal(true);
    expect(allowlist.allowsAddress('::1')).to.equal(true);
    expect(allowlist.allowsAddress('fe80::1')).to.equal(false);
  });

  it('matches host names exactly, case- and trailing-dot-insensitively, not their subdomains', () => {
    const allowlist = parseNetworkAllowlist(['Internal.Example']);
    expect(allowlist.allowsHost('internal.example')).to.equal(true);
    expect(allowlist.allowsHost('INTERNAL.example.')).to.equal(true);
    expect(allowlist.allowsHost('a.internal.example')).to.equal(false);
    expect(allowlist.allowsAddress('internal.example')).to.equal(false);
  });

  it('allows nothing when empty', () => {
    const allowlist = parseNetworkAllowlist([]);
    expect(allowlist.allowsAddress('127.0.0.1')).to.equal(false);
    expect(allowlist.allowsHost('localhost')).to.equal(false);
  });

  for (const bad of ['127.0.0.0/33', 'fd00::/129', 'host/8', '10.0.0.0/8/1', 'http://x', 'a b']) {
    it(`rejects "${bad}" with a ConfigError`, () => {
      expect(() => parseNetworkAllowlist([bad])).to.throw(ConfigError);
    });
  }
});
