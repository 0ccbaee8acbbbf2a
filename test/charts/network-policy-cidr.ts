/**
 * The check the API server makes on a NetworkPolicy ipBlock, so that `make test` catches an except
 * it would reject without a cluster. Kubernetes (pkg/apis/networking/validation, ValidateIPBlock)
 * requires each except to be a strict subset of the cidr:
 *   cidr.Contains(except.IP) && cidrMaskLen < exceptMaskLen
 * with Go's net.IPNet.Contains, which treats an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as IPv4:
 * so ::/0 does not contain ::ffff:0:0/96, while 0.0.0.0/0 does.
 */
import { isIPv4 } from 'node:net';
import { ipv6Value } from '../../services/renderer/src/guard/address-class.ts';

interface ParsedCidr {
  /** The network address as Go's IP.To4() sees it: 4 bytes for IPv4 and IPv4-mapped IPv6, else 16. */
  family: 4 | 6;
  value: bigint;
  /** Mask.Size() as written: of 32 bits for IPv4 notation, of 128 for IPv6 notation. */
  prefix: number;
  /** The mask applied in Contains: a 16-byte mask over an IPv4 network keeps only its last 32 bits. */
  matchPrefix: number;
}

const isMapped = (value: bigint) => value >> 32n === 0xffffn;
const maskOf = (bits: number, width: number) => ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - bits)) - 1n);

/** Parses a CIDR as Go's net.ParseCIDR does, or returns undefined where it would fail. */
export function parseCidr(text: string): ParsedCidr | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!match) return undefined;
  const [, address = '', bitsText = ''] = match;
  const bits = Number(bitsText);
  if (isIPv4(address)) {
    if (bits > 32) return undefined;
    const value = address.split('.').reduce((sum, part) => (sum << 8n) | BigInt(Number(part)), 0n) & maskOf(bits, 32);
    return { family: 4, value, prefix: bits, matchPrefix: bits };
  }
  if (address.includes('%')) return undefined;
  const full = ipv6Value(address);
  if (full === undefined || bits > 128) return undefined;
  const value = full & maskOf(bits, 128);
  if (isMapped(value)) return { family: 4, value: value & 0xffffffffn, prefix: bits, matchPrefix: Math.max(0, bits - 96) };
  return { family: 6, value, prefix: bits, matchPrefix: bits };
}

/** Why the API server would reject `except` under `cidr`, or undefined when it accepts it. */
export function exceptProblem(cidr: string, except: string): string | undefined {
  const outer = parseCidr(cidr);
  if (!outer) return `cidr ${cidr} is not a CIDR`;
  const inner = parseCidr(except);
  if (!inner) return `except ${except} is not a CIDR`;
  if (inner.family !== outer.family) {
    const mapped = inner.family === 4 && except.includes(':') ? ' (IPv4-mapped IPv6 counts as IPv4)' : '';
    return `except ${except} is IPv${inner.family}${mapped}, not in the family of cidr ${cidr}`;
  }
  const width = outer.family === 4 ? 32 : 128;
  const mask = maskOf(outer.matchPrefix, width);
  if ((inner.value & mask) !== (outer.value & mask)) return `except ${except} is outside cidr ${cidr}`;
  if (outer.prefix >= inner.prefix) return `except ${except} is not a strict subset of cidr ${cidr}`;
  return undefined;
}

/** Every ipBlock in a NetworkPolicy's ingress and egress rules. */
export function ipBlocks(policy: Record<string, any>): Array<{ cidr: string; except?: string[] }> {
  const spec = policy.spec as { ingress?: Array<{ from?: any[] }>; egress?: Array<{ to?: any[] }> } | undefined;
  const peers = [...(spec?.ingress ?? []).flatMap((rule) => rule.from ?? []), ...(spec?.egress ?? []).flatMap((rule) => rule.to ?? [])];
  return peers.flatMap((peer) => (peer.ipBlock ? [peer.ipBlock] : []));
}
