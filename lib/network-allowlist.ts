import { BlockList, isIP } from 'node:net';
import { ConfigError } from './env.ts';

/**
 * PRIVATE_NETWORK_ALLOWLIST: the one opt-out from the network guard. Entries are CIDRs
 * (`127.0.0.0/8`, `fd00::/8`), single addresses (`127.0.0.2`) or host names (`internal.example`).
 * A host name entry matches that host exactly, not its subdomains.
 */
export interface NetworkAllowlist {
  readonly entries: readonly string[];
  allowsAddress(address: string): boolean;
  allowsHost(hostname: string): boolean;
}

/** `variable` names the setting in errors: STORAGE_ENDPOINT_ALLOWLIST has the same form. */
export function parseNetworkAllowlist(entries: readonly string[], variable = 'PRIVATE_NETWORK_ALLOWLIST'): NetworkAllowlist {
  const blockList = new BlockList();
  const hosts = new Set<string>();
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (extra !== undefined || (prefix !== undefined && family === 0)) {
      throw new ConfigError(`${variable}: "${entry}" is neither a CIDR, an IP address nor a host name`);
    }
    if (family !== 0) {
      const type = family === 4 ? 'ipv4' : 'ipv6';
      const maxBits = family === 4 ? 32 : 128;
      const bits = prefix === undefined ? maxBits : Number(prefix);
      if (!Number.isInteger(bits) || bits < 0 || bits > maxBits) {
        throw new ConfigError(`${variable}: "${entry}" has an invalid prefix length`);
      }
      blockList.addSubnet(address as string, bits, type);
      continue;
    }
    if (!/^[a-z0-9.-]+$/i.test(entry)) {
      throw new ConfigError(`${variable}: "${entry}" is neither a CIDR, an IP address nor a host name`);
    }
    hosts.add(entry.toLowerCase().replace(/\.$/, ''));
  }

  return {
    entries: [...entries],
    allowsAddress(address) {
      const family = isIP(address);
      if (family === 0) return false;
      return blockList.check(address, family === 4 ? 'ipv4' : 'ipv6');
    },
    allowsHost(hostname) {
      return hosts.has(hostname.toLowerCase().replace(/\.$/, ''));
    },
  };
}
