import { ConfigError, readInt, readOptionalString, type Env } from '../../../lib/env.ts';

/**
 * PUBLIC_BASE_URL: where clients reach the API (`https://shots.example.com`, or with a path prefix
 * behind a proxy). Every absolute URL the API hands out (a capture's statusUrl and Location, a
 * webhook's imageUrl and statusUrl, a signed render link) starts with it. It never comes from a
 * request's Host header, which the caller chooses. Default: http://localhost:PORT, right for one
 * machine; behind an ingress set it (the chart does, from the ingress host).
 */
export function readPublicBaseUrl(env: Env): string {
  const value = readOptionalString(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${readInt(env, 'PORT', 3000, { min: 0, max: 65_535 })}`;
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ConfigError(`PUBLIC_BASE_URL must be an http or https URL, got "${value}"`);
  if (url.username || url.password || url.search || url.hash) throw new ConfigError('PUBLIC_BASE_URL must have no credentials, query or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
