/**
 * Typed errors, as Stripe's libraries have them: one class per kind of failure, each carrying the
 * HTTP status and the server's own message. No error ever holds the API key, a signing secret or a
 * request header: only the method, the path, the status, the server's message and its request id.
 */

export interface ErrorDetails {
  /** The HTTP status, when the server answered. */
  status?: number | undefined;
  /** The X-Request-Id of the answer: quote it when you report a problem. */
  requestId?: string | undefined;
  /** Seconds the server asked to wait (Retry-After), on 429 and 503. */
  retryAfter?: number | undefined;
  /** For example `POST /api/screenshot`. */
  request?: string | undefined;
  cause?: unknown;
}

/** The base class of every error this library throws. */
export class ViewfinderError extends Error {
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly request: string | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.status = details.status;
    this.requestId = details.requestId;
    this.retryAfter = details.retryAfter;
    this.request = details.request;
  }
}

/** The server answered with an error status; `message` is its `error` text. */
export class APIError extends ViewfinderError {}
/** 400: the request is invalid (a field, a value, a missing `site_id`); the message names the problem. */
export class InvalidRequestError extends APIError {}
/** 401: the key is missing, unknown, regenerated or deleted. */
export class AuthenticationError extends APIError {}
/** 403: the key may not do this (a site key on the management API, a domain outside the site's, an expired render link). */
export class PermissionDeniedError extends APIError {}
/** 404: no such site, key, monitor, capture or route. */
export class NotFoundError extends APIError {}
/** 409: a conflict (an object owned by Kubernetes, a name taken, an image of an unfinished capture). */
export class ConflictError extends APIError {}
/** 429: the key's rate limit, or a full render queue; `retryAfter` says how long to wait, in seconds. */
export class RateLimitError extends APIError {}
/** 408 and 5xx: the capture timed out or failed on the server, or the service is unavailable. */
export class ServerError extends APIError {}

/** The request never got an answer: the connection failed. */
export class APIConnectionError extends ViewfinderError {}
/** The request took longer than its `timeout`. */
export class APITimeoutError extends APIConnectionError {}

/** `captures.wait` gave up: the capture had not finished within the bound. */
export class CaptureWaitTimeoutError extends ViewfinderError {
  /** The capture's status as last seen. */
  readonly lastStatus: unknown;
  constructor(message: string, lastStatus: unknown) {
    super(message);
    this.lastStatus = lastStatus;
  }
}

/** A webhook whose signature does not check, is too old, or is missing. */
export class WebhookSignatureError extends ViewfinderError {}

const BY_STATUS: Record<number, typeof APIError> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
};

/** The error class for an answer's status. */
export function errorClassFor(status: number): typeof APIError {
  return BY_STATUS[status] ?? (status === 408 || status >= 500 ? ServerError : APIError);
}
