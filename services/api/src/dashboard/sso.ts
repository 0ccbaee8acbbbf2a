import { isIP } from 'node:net';
import type { Context } from 'koa';
import { secretMatches } from '../../../../lib/constant-time.ts';
import type { SsoConfig } from './config.ts';

/**
 * Single sign-on through a trusted authenticating proxy (oauth2-proxy style). The proxy signs the
 * user in and passes the email in a header; that header counts only when the request proves it
 * came through the proxy: the shared secret in its own header, the proxy's source address (the
 * TCP peer, never X-Forwarded-For), or both when both are configured.
 */
export function proxiedEmail(ctx: Context, sso: SsoConfig): string | undefined {
  const email = ctx.get(sso.emailHeader).trim();
  if (!email) return undefined;
  if (sso.secret !== undefined && !secretMatches(ctx.get(sso.secretHeader), sso.secret)) return undefined;
  if (sso.trustedSources !== undefined && !fromTrustedSource(ctx.req.socket.remoteAddress, sso)) return undefined;
  return email;
}

function fromTrustedSource(address: string | undefined, sso: SsoConfig): boolean {
  if (!address) return false;
  // An IPv4 peer on a dual-stack socket appears as ::ffff:a.b.c.d.
  const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const family = isIP(plain);
  return family !== 0 && (sso.trustedSources?.check(plain, family === 4 ? 'ipv4' : 'ipv6') ?? false);
}
