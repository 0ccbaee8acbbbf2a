/**
 * Typed HTTP errors. Throw them anywhere; exactly one translator (lib/http/error-translator.ts,
 * used by the API and the renderer service) turns them into the JSON error shape of SPEC section 7.
 */

/** The body every error answers with. 401 alone carries no `success` field (SPEC 7). */
export interface ErrorBody {
  success?: false;
  error: string;
}

export class HttpError extends Error {
  readonly status: number;
  /** Extra response headers, e.g. Retry-After or Allow. */
  readonly headers: Record<string, string>;
  /** Whether the message may be shown to the client (as with Koa's err.expose). */
  readonly expose = true;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { success: false, error: this.message };
  }
}

export class BadRequest extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}

export class Unauthorized extends HttpError {
  constructor(message = 'Invalid API key') {
    super(401, message);
  }

  override toBody(): ErrorBody {
    return { error: this.message };
  }
}

export class Forbidden extends HttpError {
  constructor(message: string) {
    super(403, message);
  }
}

export class NotFound extends HttpError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}

/** The object exists but cannot be changed this way, e.g. it is owned by a Kubernetes resource. */
export class Conflict extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}

export class MethodNotAllowed extends HttpError {
  constructor(allowed: string[]) {
    super(405, `Method not allowed: use ${allowed.join(', ')}`, { Allow: allowed.join(', ') });
  }
}

export class NavigationTimeout extends HttpError {
  constructor(message = 'Navigation timeout: the page took too long to load') {
    super(408, message);
  }
}

/** The Accept header names only representations this request cannot produce. */
export class NotAcceptable extends HttpError {
  constructor(message: string) {
    super(406, message);
  }
}

export class PayloadTooLarge extends HttpError {
  constructor(limitBytes: number) {
    super(413, `Request body too large: the limit is ${limitBytes} bytes`);
  }
}

export class UnsupportedMediaType extends HttpError {
  constructor(message = 'Content-Type must be application/json') {
    super(415, message);
  }
}

export class TooManyRequests extends HttpError {
  constructor(message: string, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, message, { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

/**
 * A capture's journey (steps) stopped at a step: 422, the request was understood but the page did
 * not let it be done. The body is the usual error shape plus the step report (`journey`) and the
 * picture of the page when the step failed (`image`, a data URI), so that the client sees why.
 */
export class JourneyFailed extends HttpError {
  readonly journey: Record<string, unknown>;
  readonly image: string | undefined;

  constructor(message: string, journey: Record<string, unknown>, image?: string) {
    super(422, message);
    this.journey = journey;
    this.image = image;
  }

  override toBody(): ErrorBody & { journey: Record<string, unknown>; image?: string } {
    return { success: false, error: this.message, journey: this.journey, ...(this.image !== undefined ? { image: this.image } : {}) };
  }
}

export class CaptureFailed extends HttpError {
  constructor(message = 'Screenshot generation failed') {
    super(500, message);
  }
}

/** Another service this request needed (a client's storage destination) refused or failed; the message names why. */
export class BadGateway extends HttpError {
  constructor(message: string) {
    super(502, message);
  }
}

export class ServiceUnavailable extends HttpError {
  constructor(message: string, retryAfterSeconds?: number) {
    super(503, message, retryAfterSeconds ? { 'Retry-After': String(Math.ceil(retryAfterSeconds)) } : {});
  }
}

export function isHttpError(err: unknown): err is HttpError {
  return err instanceof HttpError;
}
