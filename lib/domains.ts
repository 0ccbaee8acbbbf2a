import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { BadRequest, Forbidden } from './errors.ts';

/**
 * Domain restrictions (SPEC 2.6): which hosts a site's allowedDomains let a restricted key capture.
 * Hosts and allowed domains are both brought to one canonical form first (lowercase, punycode, no
 * trailing dot, IPv6 in brackets) so that matching is plain string comparison on label boundaries.
 */

const MAX_HOSTNAME_LENGTH = 253;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The canonical host of an http(s) URL: userinfo and port dropped, IDN as punycode. Undefined when unparsable. */
export function hostOfUrl(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (parsed === null || parsed.hostname === '') return undefined;
  return canonicalHost(parsed.hostname);
}

/** True when `host` (canonical, from hostOfUrl) is one of `allowed` or a subdomain of one of them. */
export function hostMatches(host: string, allowed: readonly string[]): boolean {
  const hostIsIp = isIpLiteral(host);
  return allowed.some((domain) => {
    if (host === domain) return true;
    // An IP literal matches only itself: 1.2.3.4 is no "subdomain" of 2.3.4.
    if (hostIsIp || isIpLiteral(domain)) return false;
    return host.endsWith(`.${domain}`);
  });
}

const DOMAIN_REFUSAL_PREFIX = 'Domain not allowed: ';

/**
 * The one wording of a domain refusal (403), whether the API refuses the URL asked for or the
 * renderer refuses where the page went; `how` says how the capture got there, `site` names the site.
 */
export function domainRefusal(host: string | undefined, how?: string, site?: string): string {
  const where = site === undefined ? 'the allowed domains' : `the allowed domains of site ${site}`;
  return `${DOMAIN_REFUSAL_PREFIX}${host ?? 'this host'} is not among ${where}${how === undefined ? '' : ` (${how})`}`;
}

/** True for a refusal worded by domainRefusal, also after it crossed the renderer's HTTP API. */
export function isDomainRefusal(err: unknown): boolean {
  return err instanceof Forbidden && err.message.startsWith(DOMAIN_REFUSAL_PREFIX);
}

/**
 * Validates and normalizes one allowedDomains entry as written by a user: a bare host name or IP
 * literal. A leading `*.` is accepted and dropped, because subdomains are always included;
 * anything else that is not a host (a scheme, a path, a port, userinfo, another wildcard) is a 400.
 */
export function normalizeAllowedDomain(entry: string): string {
  const invalid = (why: string) => new BadRequest(`allowedDomains: "${entry}" is not a host name (${why})`);
  let value = entry.trim().toLowerCase();
  if (value === '') throw invalid('it is empty');
  if (value.includes('://')) throw invalid('remove the scheme');
  if (/[/?#]/.test(value)) throw invalid('remove the path');
  if (value.includes('@')) throw invalid('remove the user name');
  if (value.startsWith('*.')) value = value.slice(2);
  if (value.includes('*')) throw invalid('only a leading "*." wildcard is accepted');

  const bracketed = /^\[(.+)\]$/.exec(value)?.[1];
  if (bracketed !== undefined || isIP(value) === 6) {
    const address = bracketed ?? value;
    if (isIP(address) !== 6) throw invalid('not a valid IPv6 address');
    return canonicalHost(`[${address}]`);
  }
  if (value.includes(':')) throw invalid('remove the port');

  value = value.replace(/\.$/, '');
  if (isIP(value) === 4) return value;
  if (/^[0-9.]+$/.test(value)) throw invalid('not a valid IPv4 address');
  const ascii = domainToASCII(value);
  if (ascii === '' || ascii.length > MAX_HOSTNAME_LENGTH || !ascii.split('.').every((label) => LABEL.test(label))) {
    throw invalid('use letters, digits and hyphens between dots');
  }
  return ascii;
}

/** Normalizes a whole list: every entry validated, duplicates dropped, order kept. */
export function normalizeAllowedDomains(entries: readonly string[]): string[] {
  return [...new Set(entries.map(normalizeAllowedDomain))];
}

/** Lowercase, punycode, no trailing dot; IPv6 in its compressed bracketed form. */
function canonicalHost(hostname: string): string {
  if (hostname.startsWith('[')) {
    // The URL parser writes IPv6 in one canonical (compressed, lowercase) form.
    return URL.parse(`http://${hostname}/`)?.hostname ?? hostname.toLowerCase();
  }
  const withoutDot = hostname.toLowerCase().replace(/\.$/, '');
  return domainToASCII(withoutDot) || withoutDot;
}

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || isIP(host) === 4;
}
