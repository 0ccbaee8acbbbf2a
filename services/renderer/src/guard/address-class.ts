import { isIPv4, isIPv6 } from 'node:net';

/**
 * The one classifier of the network guard: is an IP address public, and if not, what is it?
 * Every address the browser may reach passes through here, whatever spelling the page used:
 * callers first canonicalise host spellings with `canonicalHost`.
 */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared'
  | 'multicast'
  | 'reserved'
  | 'unique-local'
  | 'ipv4-mapped'
  | 'ipv4-compatible'
  | 'translated'
  | 'tunnel'
  | 'invalid';

type Range = readonly [prefix: bigint, bits: number, kind: AddressClass];

const v4 = (address: string) => address.split('.').reduce((sum, part) => (sum << 8n) | BigInt(Number(part)), 0n);

/** IANA's IPv4 special-purpose registry, every entry that is not globally reachable, plus multicast and class E. */
const IPV4_RANGES: readonly Range[] = [
  [v4('0.0.0.0'), 8, 'unspecified'], // "this network"
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'shared'], // CGNAT
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local'], // includes cloud metadata at 169.254.169.254
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'reserved'], // IETF protocol assignments
  [v4('192.0.2.0'), 24, 'reserved'], // TEST-NET-1
  [v4('192.88.99.0'), 24, 'reserved'], // 6to4 relay anycast, deprecated
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'reserved'], // benchmarking
  [v4('198.51.100.0'), 24, 'reserved'], // TEST-NET-2
  [v4('203.0.113.0'), 24, 'reserved'], // TEST-NET-3
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'], // class E and the limited broadcast 255.255.255.255
];

const NAT64_WELL_KNOWN = 0x0064ff9b_00000000_00000000n; // 64:ff9b::/96, top 96 bits

function inRange(value: bigint, width: number, [prefix, bits]: Range): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === prefix >> shift;
}

function classifyIPv4Value(value: bigint): AddressClass {
  return IPV4_RANGES.find((range) => inRange(value, 32, range))?.[2] ?? 'public';
}

/**
 * IPv6 is public only inside global unicast, 2000::/3, minus its special-purpose blocks. NAT64's
 * well-known prefix is the one embedding that stays usable (IPv6-only clusters reach IPv4 sites
 * through it), so it is judged by the IPv4 address it carries.
 */
function classifyIPv6Value(value: bigint): AddressClass {
  const top16 = Number(value >> 112n);
  if (value === 0n) return 'unspecified';
  if (value === 1n) return 'loopback';
  if (value >> 32n === 0xffffn) return 'ipv4-mapped'; // ::ffff:0:0/96
  if (value >> 32n === 0n) return 'ipv4-compatible'; // ::/96, deprecated
  if (value >> 32n === NAT64_WELL_KNOWN) {
    return classifyIPv4Value(value & 0xffffffffn) === 'public' ? 'public' : 'translated';
  }
  if (value >> 80n === 0x0064ff9b0001n) return 'translated'; // 64:ff9b:1::/48, local-use NAT64
  if ((top16 & 0xfe00) === 0xfc00) return 'unique-local'; // fc00::/7
  if ((top16 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((top16 & 0xffc0) === 0xfec0) return 'link-local'; // fec0::/10, deprecated site-local
  if ((top16 & 0xff00) === 0xff00) return 'multicast';
  if ((top16 & 0xe000) !== 0x2000) return 'reserved'; // outside global unicast
  if (top16 === 0x2002) return 'tunnel'; // 6to4, embeds an IPv4 address
  if (value >> 96n === 0x20010000n) return 'tunnel'; // Teredo 2001::/32, embeds two IPv4 addresses
  if (top16 === 0x2001 && Number((value >> 96n) & 0xffffn) < 0x200) return 'reserved'; // 2001::/23 IETF assignments
  if (value >> 96n === 0x20010db8n) return 'reserved'; // documentation
  if (value >> 108n === 0x3fff0n) return 'reserved'; // 3fff::/20, documentation
  return 'public';
}

/** Parses an IPv6 literal (without brackets; a zone id is ignored) into its 128-bit value. */
export function ipv6Value(address: string): bigint | undefined {
  const bare = address.replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  let text = bare;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted) {
    const value = v4(dotted);
    text = `${text.slice(0, -dotted.length)}${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups];
  return groups.reduce((sum, group) => (sum << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** Classifies a canonical IP address (IPv4 dotted quad or IPv6, brackets allowed). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(bare)) return classifyIPv4Value(v4(bare));
  const value = ipv6Value(bare);
  return value === undefined ? 'invalid' : classifyIPv6Value(value);
}

/**
 * The canonical form of a host as a browser would connect to it: IPv4 in any spelling (decimal
 * `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`, a trailing dot) becomes a dotted
 * quad, IPv6 loses its brackets, names are lower-cased without a trailing dot. Undefined when it is
 * no valid host at all.
 */
export function canonicalHost(host: string): string | undefined {
  if (host === '' || /[\s/?#@\\]/.test(host)) return undefined;
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const hostname = URL.parse(`http://${bracketed}/`)?.hostname;
  if (!hostname) return undefined;
  if (hostname.startsWith('[')) return hostname.slice(1, -1);
  return hostname.replace(/\.$/, '');
}
