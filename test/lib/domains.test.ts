import { expect } from 'chai';
import { hostMatches, hostOfUrl, normalizeAllowedDomain, normalizeAllowedDomains } from '../../lib/domains.ts';
import { BadRequest } from '../../lib/errors.ts';

/** Whether a capture of `url` is allowed by `allowed` (as written by a user). */
function allows(allowed: string[], url: string): boolean {
  const host = hostOfUrl(url);
  return host !== undefined && hostMatches(host, normalizeAllowedDomains(allowed));
}

describe('domain restrictions (lib/domains.ts)', () => {
  describe('matching a URL against allowed domains', () => {
    const example = ['example.com'];
    const cases: [string, string[], string, boolean][] = [
      ['the domain itself', example, 'https://example.com/', true],
      ['a subdomain', example, 'https://www.example.com/page', true],
      ['a deep subdomain', example, 'https://a.b.c.example.com/', true],
      ['a host that only ends with the same letters (evil-example.com)', example, 'https://evil-example.com/', false],
      ['a host that only ends with the same letters without a hyphen (notexample.com)', example, 'https://notexample.com/', false],
      ['a host that starts with the domain (example.com.evil.net)', example, 'https://example.com.evil.net/', false],
      ['a parent of the domain', ['www.example.com'], 'https://example.com/', false],
      ['an upper-case host with a trailing dot (EXAMPLE.com.)', example, 'https://EXAMPLE.com./', true],
      ['an upper-case allowed domain with a trailing dot', ['EXAMPLE.com.'], 'https://example.com/', true],
      ['userinfo that looks like the domain (http://example.com@evil.net/)', example, 'http://example.com@evil.net/', false],
      ['userinfo on an allowed host', example, 'http://user:pass@example.com/', true],
      ['a host with a port', example, 'https://example.com:8443/x', true],
      ['a subdomain with a port', example, 'http://api.example.com:8080/', true],
      ['another host with the allowed port', example, 'http://evil.net:443/', false],
      ['an IDN host against its Unicode form', ['bücher.de'], 'https://bücher.de/', true],
      ['an IDN host against its punycode form', ['xn--bcher-kva.de'], 'https://BÜCHER.de/', true],
      ['an IDN subdomain', ['bücher.de'], 'https://www.xn--bcher-kva.de/', true],
      ['an ASCII look-alike of an IDN domain', ['bücher.de'], 'https://bucher.de/', false],
      ['an IP literal against itself', ['192.0.2.10'], 'http://192.0.2.10:8080/', true],
      ['an IP literal written in decimal against its dotted form', ['127.0.0.1'], 'http://2130706433/', true],
      ['another IP address', ['192.0.2.10'], 'http://192.0.2.11/', false],
      ['an IP literal against a domain', example, 'http://93.184.215.14/', false],
      ['an IPv6 literal against itself', ['[2001:db8::1]'], 'http://[2001:DB8:0::1]:80/', true],
      ['an IPv6 literal written without brackets', ['2001:db8::1'], 'http://[2001:db8::1]/', true],
      ['anything, when the list is empty', [], 'https://example.com/', false],
      ['one of several domains', ['a.com', 'example.com'], 'https://shop.example.com/', true],
      ['a wildcard entry, whose apex is included too', ['*.example.com'], 'https://example.com/', true],
    ];
    for (const [what, allowed, url, expected] of cases) {
      it(`${expected ? 'allows' : 'refuses'} ${what}`, () => {
        expect(allows(allowed, url)).to.equal(expected);
      });
    }
  });

  describe('normalizing allowedDomains on write', () => {
    const normalized: [string, string][] = [
      ['Example.COM', 'example.com'],
      ['example.com.', 'example.com'],
      ['  example.com ', 'example.com'],
      ['*.example.com', 'example.com'],
      ['bücher.de', 'xn--bcher-kva.de'],
      ['192.0.2.1', '192.0.2.1'],
      ['[2001:DB8::1]', '[2001:db8::1]'],
      ['localhost', 'localhost'],
    ];
    for (const [input, output] of normalized) {
      it(`stores "${input}" as "${output}"`, () => {
        expect(normalizeAllowedDomain(input)).to.equal(output);
      });
    }

    const rejected: [string, RegExp][] = [
      ['https://example.com', /scheme/],
      ['example.com/path', /path/],
      ['example.com?x=1', /path/],
      ['example.com:8080', /port/],
      ['user@example.com', /user/],
      ['*example.com', /wildcard/],
      ['www.*.example.com', /wildcard/],
      ['*', /wildcard/],
      ['', /empty/],
      ['exa mple.com', /host name/],
      ['-example.com', /host name/],
      ['example..com', /host name/],
      ['999.1.1.1', /IPv4/],
      ['[not-an-ip]', /IPv6/],
    ];
    for (const [input, why] of rejected) {
      it(`rejects "${input}" with a 400 that says why`, () => {
        expect(() => normalizeAllowedDomain(input)).to.throw(BadRequest, why);
      });
    }

    it('drops duplicates that differ only in spelling, keeping the order', () => {
      expect(normalizeAllowedDomains(['b.com', 'Example.com', '*.example.com', 'example.com.'])).to.deep.equal(['b.com', 'example.com']);
    });
  });
});
