import dns from 'node:dns/promises';
import { isIP } from 'node:net';
import { BadRequest, CaptureFailed, Forbidden } from '../../../../lib/errors.ts';
import type { NetworkAllowlist } from '../../../../lib/network-allowlist.ts';
import { canonicalHost, classifyAddress } from './address-class.ts';

/** An address that was checked, and that the connection must go to (pinned). */
export interface Destination {
  address: string;
  family: 4 | 6;
}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface NetworkGuard {
  /**
   * Resolves `host` once and checks every address it resolves to; the caller connects to the
   * returned address, so a DNS answer that changes after the check (rebinding) is never used.
   * Throws Forbidden when any address is not public and not allowlisted.
   */
  resolve(host: string): Promise<Destination>;
  /** The top-level check: http(s) only (400), and a host the guard lets through (403). */
  checkUrl(url: string): Promise<void>;
}

/**
 * `localhost` and every name under it are loopback whatever DNS says (RFC 6761), as browsers treat
 * them; Debian's resolver knows only `localhost` itself. Loopback stays denied unless allowlisted.
 */
const LOCALHOST_NAME = /(^|\.)localhost\.?$/i;

const systemLookup: Lookup = (hostname) =>
  LOCALHOST_NAME.test(hostname) ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : dns.lookup(hostname, { all: true, order: 'verbatim' });

/**
 * How long a resolved name is reused. A page asks for the same few hosts dozens of times, and every
 * lookup would otherwise take a slot of libuv's four-thread pool. Reuse is safe: what is cached is
 * the answer that was checked, and connections go to exactly those addresses.
 */
const LOOKUP_TTL_MS = 5000;
const LOOKUP_CACHE_SIZE = 1000;

function cachedLookup(lookup: Lookup): Lookup {
  const cache = new Map<string, { answer: ReturnType<Lookup>; expires: number }>();
  return (hostname) => {
    const now = performance.now();
    const hit = cache.get(hostname);
    if (hit && hit.expires > now) return hit.answer;
    if (cache.size >= LOOKUP_CACHE_SIZE) cache.clear();
    // Concurrent requests for one name share one lookup; a failed one is not kept.
    const answer = lookup(hostname);
    cache.set(hostname, { answer, expires: now + LOOKUP_TTL_MS });
    answer.catch(() => cache.delete(hostname));
    return answer;
  };
}

export function createNetworkGuard(allowlist: NetworkAllowlist, uncachedLookup: Lookup = systemLookup): NetworkGuard {
  const lookup = cachedLookup(uncachedLookup);
  const deny = (host: string, kind: string, resolved: boolean) =>
    new Forbidden(
      `Forbidden: ${host} ${resolved ? 'resolves to' : 'is'} a ${kind} address; only public addresses may be captured (see PRIVATE_NETWORK_ALLOWLIST)`,
    );

  async function resolve(rawHost: string): Promise<Destination> {
    const host = canonicalHost(rawHost);
    if (host === undefined) throw new BadRequest(`Invalid URL: "${rawHost}" is not a valid host`);
    const literalFamily = isIP(host);
    // An IP literal needs no lookup, which keeps loopback fixtures and IP-addressed sites off the resolver.
    const addresses = literalFamily !== 0 ? [{ address: host, family: literalFamily }] : await lookupOrFail(host);
    const hostAllowed = literalFamily === 0 && allowlist.allowsHost(host);
    for (const { address } of addresses) {
      if (hostAllowed || allowlist.allowsAddress(address)) continue;
      const kind = classifyAddress(address);
      if (kind !== 'public') throw deny(host, kind, literalFamily === 0);
    }
    const first = addresses[0] as { address: string; family: number };
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  async function lookupOrFail(host: string) {
    try {
      const addresses = await lookup(host);
      if (addresses.length > 0) return addresses;
    } catch {
      // fall through: the same answer Chromium gives for a name that does not resolve
    }
    throw new CaptureFailed('Screenshot generation failed: net::ERR_NAME_NOT_RESOLVED');
  }

  return {
    resolve,
    async checkUrl(url) {
      const parsed = URL.parse(url);
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
        throw new BadRequest('Invalid URL: a valid http or https URL is required');
      }
      await resolve(parsed.hostname);
    },
  };
}
