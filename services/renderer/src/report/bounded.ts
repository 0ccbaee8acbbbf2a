/**
 * What keeps a report safe and small whatever the page does: URLs without userinfo and cut to a
 * length, messages cut, lists capped with their total kept, and the request's own secrets (cookie,
 * header and authorization values, the URL's userinfo) replaced wherever the page echoed them.
 */
import { authorizationHeader } from '../guard/request-rules.ts';
import type { CaptureRequest } from '../renderer.ts';
import { MAX_MESSAGE_LENGTH, MAX_URL_LENGTH, type Counted } from './page-report.ts';

const ELLIPSIS = '…';

export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - ELLIPSIS.length)}${ELLIPSIS}`;
}

export function boundedMessage(text: string): string {
  return cut(text, MAX_MESSAGE_LENGTH);
}

/** The URL without its userinfo, cut to MAX_URL_LENGTH; a data: URL is named by its type only. */
export function boundedUrl(url: string): string {
  if (url.startsWith('data:')) return cut(url.slice(0, url.search(/[,;]/) >>> 0), MAX_URL_LENGTH);
  const parsed = URL.parse(url);
  if (parsed && (parsed.username || parsed.password)) {
    parsed.username = '';
    parsed.password = '';
    return cut(parsed.href, MAX_URL_LENGTH);
  }
  return cut(url, MAX_URL_LENGTH);
}

/** A list that keeps its first `max` items and counts every one. */
export class CountedList<T> {
  readonly #max: number;
  readonly #items: T[] = [];
  #total = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** Adds `make()`'s item while there is room; past it, only counts (nothing is built). */
  add(make: () => T): void {
    this.#total += 1;
    if (this.#items.length < this.#max) this.#items.push(make());
  }

  toJSON(): Counted<T> {
    return { total: this.#total, items: [...this.#items] };
  }
}

/** Values shorter than this are not searched for: they would match by chance, not by echo. */
const MIN_SECRET_LENGTH = 4;
export const REDACTED = '[redacted]';

/** Every value the request sent that the report must never hold. */
export function secretsOf(request: Pick<CaptureRequest, 'url' | 'headers' | 'cookies' | 'authorization' | 'steps'>): string[] {
  const secrets = [
    ...Object.values(request.headers ?? {}),
    ...(request.cookies ?? []).map((cookie) => cookie.value),
    ...(request.authorization
      ? [authorizationHeader(request.authorization), ...Object.entries(request.authorization).flatMap(([field, value]) => (field === 'type' ? [] : [value]))]
      : []),
  ];
  // What a journey types (a password) may come back in what the page shows: a URL, a console line.
  for (const step of request.steps ?? []) if (step.action === 'fill' && step.value) secrets.push(step.value);
  const url = URL.parse(request.url);
  if (url?.username) secrets.push(url.username, decodeURIComponent(url.username));
  if (url?.password) secrets.push(url.password, decodeURIComponent(url.password));
  // Longest first, so that a value containing another is replaced whole.
  return [...new Set(secrets)].filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/** `value` with every string in it cleared of `secrets`. */
export function redact<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const clean = (item: unknown): unknown => {
    if (typeof item === 'string') return secrets.reduce((text, secret) => text.replaceAll(secret, REDACTED), item);
    if (Array.isArray(item)) return item.map(clean);
    if (item && typeof item === 'object') return Object.fromEntries(Object.entries(item).map(([key, field]) => [clean(key), clean(field)]));
    return item;
  };
  return clean(value) as T;
}
