import type { Protocol } from 'puppeteer-core';
import type { BlockedResource, CaptureRequest } from '../renderer.ts';

/**
 * What a capture's options do to the requests its page makes, decided where the browser pauses
 * them (the same Fetch interception that holds a restricted key to its domains, domain-scope.ts):
 * - blockResources and blockUrls fail the requests they name before they leave the browser;
 * - headers and authorization are added to the requests for the URL's own origin, and to no
 *   other: not to a third party, not after a redirect to another origin (Chromium does not carry an
 *   override over a redirect, and the next hop is paused and judged by its own URL).
 * Only the requests these options can concern are paused, so a capture without them pauses nothing.
 */
export interface RequestRules {
  /** The Fetch patterns of the requests to pause. */
  patterns: Protocol.Fetch.RequestPattern[];
  /** For a paused request: fail it, or continue it with these extra headers (none: as it is). */
  decide(url: string, resourceType: Protocol.Network.ResourceType): { block: true } | { block: false; headers?: Record<string, string> };
}

const RESOURCE_TYPES: Record<BlockedResource, Protocol.Network.ResourceType[]> = {
  images: ['Image'],
  fonts: ['Font'],
  media: ['Media'],
  scripts: ['Script'],
};

/** A client's pattern, where `*` is the only wildcard, as Fetch's glob (which also knows `?` and `\`). */
function fetchGlob(pattern: string): string {
  return pattern.replace(/[?\\]/g, (c) => `\\${c}`);
}

/** A pattern where `*` is the only wildcard, as a regular expression's source (unanchored). */
export function wildcardSource(pattern: string): string {
  return pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
}

function patternRegExp(pattern: string): RegExp {
  return new RegExp(`^${wildcardSource(pattern)}$`, 's');
}

/** The header that `authorization` stands for. */
export function authorizationHeader(authorization: NonNullable<CaptureRequest['authorization']>): string {
  return authorization.type === 'basic'
    ? `Basic ${Buffer.from(`${authorization.username}:${authorization.password}`, 'utf8').toString('base64')}`
    : `Bearer ${authorization.token}`;
}

/** The rules of a request, or undefined when it has none of their options (the usual case: no interception at all). */
export function requestRulesOf(request: CaptureRequest): RequestRules | undefined {
  const { blockResources, blockUrls, headers, authorization } = request;
  if (!blockResources && !blockUrls && !headers && !authorization) return undefined;
  const blockedTypes = new Set((blockResources ?? []).flatMap((kind) => RESOURCE_TYPES[kind]));
  const blockedUrls = (blockUrls ?? []).map(patternRegExp);
  const extra: Record<string, string> = { ...headers, ...(authorization ? { Authorization: authorizationHeader(authorization) } : {}) };
  // An html capture has no origin of its own: the API refuses credentials with it, and so does this.
  const origin = request.html === undefined ? URL.parse(request.url)?.origin : undefined;
  const sendsHeaders = Object.keys(extra).length > 0 && origin !== undefined && origin !== 'null';
  const patterns: Protocol.Fetch.RequestPattern[] = [
    ...[...blockedTypes].map((resourceType) => ({ urlPattern: '*', resourceType, requestStage: 'Request' as const })),
    ...(blockUrls ?? []).map((pattern) => ({ urlPattern: fetchGlob(pattern), requestStage: 'Request' as const })),
    ...(sendsHeaders ? [{ urlPattern: `${origin}/*`, requestStage: 'Request' as const }] : []),
  ];
  return {
    patterns,
    decide(url, resourceType) {
      if (blockedTypes.has(resourceType) || blockedUrls.some((pattern) => pattern.test(url))) return { block: true };
      return sendsHeaders && URL.parse(url)?.origin === origin ? { block: false, headers: extra } : { block: false };
    },
  };
}

/** The request's headers with `extra` over them, case-insensitively, as Fetch.continueRequest takes them. */
export function withHeaders(original: Protocol.Network.Headers, extra: Record<string, string>): Protocol.Fetch.HeaderEntry[] {
  const names = new Set(Object.keys(extra).map((name) => name.toLowerCase()));
  return [
    ...Object.entries(original)
      .filter(([name]) => !names.has(name.toLowerCase()))
      .map(([name, value]) => ({ name, value })),
    ...Object.entries(extra).map(([name, value]) => ({ name, value })),
  ];
}
