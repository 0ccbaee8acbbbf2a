import { expect } from 'chai';
import { canonicalHost, classifyAddress } from '../../../../services/renderer/src/guard/address-class.ts';

describe('network guard: address classifier', () => {
  const expectClass = (cases: Record<string, string>) => {
    for (const [address, kind] of Object.entries(cases)) {
      it(`${address} is ${kind}`, () => {
        expect(classifyAddress(address)).to.equal(kind);
      });
    }
  };

  describe('IPv4', () => {
    expectClass({
      '0.0.0.0': 'unspecified',
      '0.255.255.255': 'unspecified',
      '10.0.0.1': 'private',
      '10.255.255.255': 'private',
      '100.64.0.1': 'shared',
      '100.127.255.254': 'shared',
      '127.0.0.1': 'loopback',
      '127.255.255.254': 'loopback',
      '169.254.169.254': 'link-local',
      '172.16.0.1': 'private',
      '172.31.255.255': 'private',
      '192.0.0.8': 'reserved',
      '192.0.2.1': 'reserved',
      '192.88.99.1': 'reserved',
      '192.168.1.1': 'private',
      '198.18.0.1': 'reserved',
      '198.51.100.7': 'reserved',
      '203.0.113.9': 'reserved',
      '224.0.0.1': 'multicast',
      '239.255.255.250': 'multicast',
      '240.0.0.1': 'reserved',
      '255.255.255.255': 'reserved',
    });
    describe('public neighbours of the denied ranges stay public', () => {
      expectClass({
        '1.1.1.1': 'public',
        '8.8.8.8': 'public',
        '9.255.255.255': 'public',
        '11.0.0.0': 'public',
        '100.63.255.255': 'public',
        '100.128.0.0': 'public',
        '126.255.255.255': 'public',
        '128.0.0.0': 'public',
        '169.253.255.255': 'public',
        '172.15.255.255': 'public',
        '172.32.0.0': 'public',
        '192.167.255.255': 'public',
        '192.169.0.0': 'public',
        '223.255.255.255': 'public',
      });
    });
  });

  describe('IPv6', () => {
    expectClass({
      '::': 'unspecified',
      '::1': 'loopback',
      '[::1]': 'loopback',
      '0:0:0:0:0:0:0:1': 'loopback',
      'fc00::1': 'unique-local',
      'fd12:3456:789a::1': 'unique-local',
      'fe80::1': 'link-local',
      'fe80::1%eth0': 'link-local',
      'febf::1': 'link-local',
      'fec0::1': 'link-local',
      'ff02::1': 'multicast',
      'ff05::2': 'multicast',
      '100::1': 'reserved',
      '2001:db8::1': 'reserved',
      '3fff::1': 'reserved',
      '2001:10::1': 'reserved',
      '4000::1': 'reserved',
    });
    describe('IPv4 embedded in IPv6', () => {
      expectClass({
        '::ffff:127.0.0.1': 'ipv4-mapped',
        '::ffff:7f00:1': 'ipv4-mapped',
        '::ffff:10.0.0.1': 'ipv4-mapped',
        '::ffff:8.8.8.8': 'ipv4-mapped',
        '0:0:0:0:0:ffff:169.254.169.254': 'ipv4-mapped',
        '::127.0.0.1': 'ipv4-compatible',
        '::7f00:1': 'ipv4-compatible',
        '::8.8.8.8': 'ipv4-compatible',
        '2002:7f00:1::': 'tunnel', // 6to4 of 127.0.0.1
        '2002:0808:0808::1': 'tunnel', // 6to4 of 8.8.8.8: 6to4 is deprecated, all of it is denied
        '2001:0:4136:e378:8000:63bf:80ff:fffe': 'tunnel', // Teredo of 127.0.0.1
        '2001::1': 'tunnel',
        '64:ff9b::127.0.0.1': 'translated',
        '64:ff9b::7f00:1': 'translated',
        '64:ff9b::a9fe:a9fe': 'translated', // 169.254.169.254
        '64:ff9b::10.1.2.3': 'translated',
        '64:ff9b:1::8.8.8.8': 'translated', // local-use NAT64 prefix
      });
      it('NAT64 of a public IPv4 address stays public: IPv6-only clusters reach IPv4 sites through it', () => {
        expect(classifyAddress('64:ff9b::8.8.8.8')).to.equal('public');
        expect(classifyAddress('64:ff9b::808:808')).to.equal('public');
      });
    });
    describe('global unicast stays public', () => {
      expectClass({
        '2606:4700:4700::1111': 'public',
        '2a00:1450:4001:80b::200e': 'public',
        '2001:4860:4860::8888': 'public',
      });
    });
  });

  it('anything that is no IP address is invalid', () => {
    for (const value of ['', 'localhost', '127.1', '2130706433', '1.2.3.4.5', '::g', '[::1']) {
      expect(classifyAddress(value), value).to.equal('invalid');
    }
  });
});

describe('network guard: host spellings', () => {
  const spellings: Record<string, string> = {
    '2130706433': '127.0.0.1', // decimal
    '0177.0.0.1': '127.0.0.1', // octal
    '0x7f.0.0.1': '127.0.0.1', // hex
    '0x7f000001': '127.0.0.1',
    '0x7f.1': '127.0.0.1', // hex, short
    '127.1': '127.0.0.1', // short
    '127.0.1': '127.0.0.1',
    '017700000001': '127.0.0.1', // octal, one number
    '127.0.0.1.': '127.0.0.1', // trailing dot
    '0': '0.0.0.0',
    '0251.0376.0251.0376': '169.254.169.254',
    '[::ffff:127.0.0.1]': '::ffff:7f00:1',
    '::ffff:127.0.0.1': '::ffff:7f00:1',
    '[0:0:0:0:0:0:0:1]': '::1',
    'LOCALHOST.': 'localhost',
    'Example.COM': 'example.com',
  };
  for (const [spelling, canonical] of Object.entries(spellings)) {
    it(`${spelling} is ${canonical}`, () => {
      expect(canonicalHost(spelling)).to.equal(canonical);
    });
  }

  it('every spelling of loopback classifies as loopback once canonical', () => {
    for (const spelling of ['2130706433', '0177.0.0.1', '0x7f.1', '127.1', '127.0.0.1.', '017700000001']) {
      expect(classifyAddress(canonicalHost(spelling) as string), spelling).to.equal('loopback');
    }
    expect(classifyAddress(canonicalHost('[::ffff:127.0.0.1]') as string)).to.equal('ipv4-mapped');
  });

  it('rejects what is no host at all', () => {
    for (const bad of ['', 'a b', 'host/path', 'user@host', '256.256.256.256', '0x100000000', '[::1']) {
      expect(canonicalHost(bad), bad).to.equal(undefined);
    }
  });
});
