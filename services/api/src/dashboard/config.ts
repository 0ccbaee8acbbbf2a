import { BlockList, isIP } from 'node:net';
import { readPublicBaseUrl } from '../public-base-url.ts';
import { ConfigError, readBool, readInt, readList, readOptionalString, readString, type Env } from '../../../../lib/env.ts';

/**
 * The dashboard's settings, read once with the rest of the API's config (config.ts calls this).
 * Defaults are the safe ones: no proxy is trusted and single sign-on is off.
 */
export interface DashboardConfig {
  /**
   * TRUST_PROXY: believe X-Forwarded-Proto and X-Forwarded-For (Koa's app.proxy). Only behind a
   * proxy that sets them; otherwise a client could claim TLS or another address.
   */
  trustProxy: boolean;
  /** PUBLIC_BASE_URL (public-base-url.ts): the origin of the render links the dashboard signs. */
  publicBaseUrl: string;
  /** A session that has not been used for this long is over. */
  sessionIdleMs: number;
  /** A session is over this long after sign-in, however busy. */
  sessionMaxMs: number;
  /**
   * Sign-in attempts per minute per email, and per client address, counted by the API's rate
   * limiter (rate-limit.ts), so they are shared wherever its counters are.
   */
  signInLimitPerAccount: number;
  signInLimitPerAddress: number;
  /** Set when a trusted authenticating proxy (oauth2-proxy style) signs users in. */
  sso: SsoConfig | undefined;
}

export interface SsoConfig {
  /** The request header that carries the signed-in email, e.g. X-Forwarded-Email. */
  emailHeader: string;
  /** The proxy proves itself by this shared secret in secretHeader, or by its source address, or both. */
  secretHeader: string;
  secret: string | undefined;
  trustedSources: BlockList | undefined;
}

export function loadDashboardConfig(env: Env): DashboardConfig {
  return {
    trustProxy: readBool(env, 'TRUST_PROXY', false),
    publicBaseUrl: readPublicBaseUrl(env),
    sessionIdleMs: readInt(env, 'DASHBOARD_SESSION_IDLE_MINUTES', 30, { min: 1, max: 7 * 24 * 60 }) * 60_000,
    sessionMaxMs: readInt(env, 'DASHBOARD_SESSION_MAX_HOURS', 12, { min: 1, max: 30 * 24 }) * 3_600_000,
    signInLimitPerAccount: readInt(env, 'DASHBOARD_SIGN_IN_LIMIT_PER_ACCOUNT', 5, { min: 1, max: 1000 }),
    signInLimitPerAddress: readInt(env, 'DASHBOARD_SIGN_IN_LIMIT_PER_ADDRESS', 30, { min: 1, max: 100_000 }),
    sso: loadSsoConfig(env),
  };
}

function loadSsoConfig(env: Env): SsoConfig | undefined {
  const emailHeader = readOptionalString(env, 'DASHBOARD_SSO_EMAIL_HEADER');
  const secret = readOptionalString(env, 'DASHBOARD_SSO_SECRET');
  const sources = readList(env, 'DASHBOARD_SSO_TRUSTED_SOURCES');
  if (emailHeader === undefined) {
    if (secret !== undefined || sources.length > 0) {
      throw new ConfigError('DASHBOARD_SSO_SECRET and DASHBOARD_SSO_TRUSTED_SOURCES need DASHBOARD_SSO_EMAIL_HEADER, which turns single sign-on on');
    }
    return undefined;
  }
  // Without a proof, anyone who can reach the API could send the header and be anyone.
  if (secret === undefined && sources.length === 0) {
    throw new ConfigError('DASHBOARD_SSO_EMAIL_HEADER needs DASHBOARD_SSO_SECRET or DASHBOARD_SSO_TRUSTED_SOURCES: the proxy must prove itself');
  }
  if (secret !== undefined && secret.length < 16) throw new ConfigError('DASHBOARD_SSO_SECRET must have at least 16 characters');
  return {
    emailHeader: emailHeader.toLowerCase(),
    secretHeader: readString(env, 'DASHBOARD_SSO_SECRET_HEADER', 'X-Viewfinder-Proxy-Secret').toLowerCase(),
    secret,
    trustedSources: sources.length > 0 ? parseSources(sources) : undefined,
  };
}

function parseSources(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 4 ? 32 : 128;
    const bits = prefix === undefined ? maxBits : Number(prefix);
    if (family === 0 || extra !== undefined || !Number.isInteger(bits) || bits < 0 || bits > maxBits) {
      throw new ConfigError(`DASHBOARD_SSO_TRUSTED_SOURCES: "${entry}" is not an IP address or CIDR`);
    }
    list.addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}
