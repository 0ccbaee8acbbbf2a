/**
 * What every Kubernetes client in the project needs around @kubernetes/client-node's calls: the
 * HTTP status of a failure, 404 as null, and a secret-free description for logs and conditions.
 * Shared by the operator and the API's renderer discovery (ARCHITECTURE: generic machinery in lib/k8s).
 */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/** The HTTP status of a failed client-node call (ApiException.code, or Watch's statusCode). */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, statusCode } = err as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'number') return code;
  if (typeof statusCode === 'number') return statusCode;
  return undefined;
}

export function isConflict(err: unknown): boolean {
  return httpStatusOf(err) === 409;
}

export async function orNull<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (err) {
    if (httpStatusOf(err) === 404) return null;
    throw err;
  }
}

/** A short, secret-free description of a Kubernetes API failure, for conditions and logs. */
export function describeKubeError(err: unknown): string {
  const status = httpStatusOf(err);
  const body = (err as { body?: unknown }).body;
  let message: string | undefined;
  if (typeof body === 'string') {
    try {
      message = (JSON.parse(body) as { message?: string }).message;
    } catch {
      message = undefined;
    }
  } else if (typeof body === 'object' && body !== null) {
    message = (body as { message?: string }).message;
  }
  const text = message ?? (err instanceof Error ? err.message : String(err));
  return status === undefined ? text : `HTTP ${status}: ${text}`;
}
