/**
 * The checks the API server makes on a NetworkPolicy ipBlock, so that `make test` catches a value it
 * would reject without a cluster. Kubernetes v1.37 (pkg/apis/networking/validation, ValidateIPBlock):
 * - each of cidr and except passes IsValidCIDRForLegacyField with strict validation
 *   (StrictIPCIDRValidation, on by default since 1.36; k8s.io/apimachinery util/validation/ip.go):
 *   no leading zeros in an octet or the prefix length, no IPv4-mapped IPv6 address
 *   (`::ffff:0:0/96`), and no bits set beyond the prefix length (`10.1.2.3/16`);
 * - each except is a strict subset of the cidr:
 *     cidr.Contains(except.IP) && cidrMaskLen < exceptMaskLen
 *   with Go's net.IPNet.Contains (the IPv4-mapped case cannot reach it any more).
 * The chart checks the values it renders into ipBlocks the same way (templates/_helpers.tpl,
 * viewfinder.cidr), with the same verdicts: network-policy-cidr.test.ts compares the three.
 */
import { isIPv4 } from 'node:net';
import { ipv6Value } from '../../services/renderer/src/guard/address-class.ts';

interface ParsedCidr {
  family: 4 | 6;
  /** The network address (host bits cleared). */
  value: bigint;
  prefix: number;
  /** Bits set beyond the prefix in the address as written. */
  hostBits: boolean;
  /** An IPv4-mapped IPv6 address (::ffff:a.b.c.d), which strict validation rejects. */
  mapped: boolean;
}

const isMapped = (value: bigint) => value >> 32n === 0xffffn;
const maskOf = (bits: number, width: number) => ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - bits)) - 1n);
const LEADING_ZERO = /(^|[./])0\d/;

/** Parses a CIDR as Go's net.ParseCIDR does, or returns undefined where it would fail. */
export function parseCidr(text: string): ParsedCidr | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!match) return undefined;
  const [, address = '', bitsText = ''] = match;
  const bits = Number(bitsText);
  if (isIPv4(address)) {
    if (bits > 32) return undefined;
    const full = address.split('.').reduce((sum, part) => (sum << 8n) | BigInt(Number(part)), 0n);
    const value = full & maskOf(bits, 32);
    return { family: 4, value, prefix: bits, hostBits: value !== full, mapped: false };
  }
  if (address.includes('%')) return undefined;
  const full = ipv6Value(address);
  if (full === undefined || bits > 128) return undefined;
  const value = full & maskOf(bits, 128);
  return { family: 6, value, prefix: bits, hostBits: value !== full, mapped: isMapped(full) };
}

/** The network address to write instead, as the chart suggests it: IPv4 only. */
const networkOf = ({ family, value, prefix }: ParsedCidr) =>
  family === 4 ? `${[24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.')}/${prefix}` : 'its network address';

/** Why strict validation (v1.36+) refuses one CIDR, or undefined when it accepts it. */
export function cidrProblem(text: string): string | undefined {
  // In the prefix length of either family (netip.ParsePrefix), in the octets of IPv4 (IPv6 groups may have them).
  if (/\/0\d/.test(text) || (LEADING_ZERO.test(text) && !text.includes(':'))) return `${text} has leading zeros`;
  const parsed = parseCidr(text);
  if (!parsed) return `${text} is not a CIDR`;
  if (parsed.mapped) return `${text} is an IPv4-mapped IPv6 CIDR`;
  if (parsed.hostBits) return `${text} has bits set beyond its /${parsed.prefix} prefix, which Kubernetes 1.36 and later refuse (write ${networkOf(parsed)})`;
  return undefined;
}

/** Why the API server would reject `except` under `cidr`, or undefined when it accepts it. */
export function exceptProblem(cidr: string, except: string): string | undefined {
  const invalid = cidrProblem(cidr) ?? cidrProblem(except);
  if (invalid) return invalid;
  const outer = parseCidr(cidr) as ParsedCidr;
  const inner = parseCidr(except) as ParsedCidr;
  if (inner.family !== outer.family) return `except ${except} is IPv${inner.family}, not in the family of cidr ${cidr}`;
  const mask = maskOf(outer.prefix, outer.family === 4 ? 32 : 128);
  if ((inner.value & mask) !== outer.value) return `except ${except} is outside cidr ${cidr}`;
  if (outer.prefix >= inner.prefix) return `except ${except} is not a strict subset of cidr ${cidr}`;
  return undefined;
}

/** Every ipBlock in a NetworkPolicy's ingress and egress rules. */
export function ipBlocks(policy: Record<string, any>): Array<{ cidr: string; except?: string[] }> {
  const spec = policy.spec as { ingress?: Array<{ from?: any[] }>; egress?: Array<{ to?: any[] }> } | undefined;
  const peers = [...(spec?.ingress ?? []).flatMap((rule) => rule.from ?? []), ...(spec?.egress ?? []).flatMap((rule) => rule.to ?? [])];
  return peers.flatMap((peer) => (peer.ipBlock ? [peer.ipBlock] : []));
}
