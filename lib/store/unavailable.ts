/**
 * Whether an error says that the store cannot be reached now (its server stopped, restarts, or the
 * network to it is down), not that the request or the data was wrong. Such an error is the same
 * for every request until the server is back: the error translator answers it 503 with
 * Retry-After, so that a client waits and tries again rather than taking it for a bug (a 500).
 * The embedded SQLite store is a file in the process: only MongoDB's errors are of this kind.
 */
const UNREACHABLE = new Set([
  // The driver found no server to send the operation to within serverSelectionTimeoutMS (lib/store/mongo.ts).
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  // The connection broke, timed out, or its pool was cleared by a network error, mid-operation.
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoPoolClearedError',
  'MongoNotConnectedError',
]);

export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (UNREACHABLE.has(err.name)) return true;
  // Mongoose holds operations while its connection is down and fails them after bufferTimeoutMS.
  return err.name === 'MongooseError' && /buffering timed out/.test(err.message);
}

/** What Retry-After says while the store is unreachable: the driver finds a server again within seconds of its return. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** How often a write is tried again while the store cannot be reached. */
const RETRY_MS = 500;

/**
 * `write`, tried again every half second while the store cannot be reached, until it answers or
 * `signal` aborts (then the last error is thrown). For a write whose loss would make work run
 * again (a job's outcome, the webhook a finished capture queues): a short outage of the store's
 * server then delays it instead. Any other error is thrown at once. `onWait` hears the first wait.
 */
export async function untilStoreAnswers<T>(write: () => Promise<T>, signal: AbortSignal, onWait?: (err: unknown) => void): Promise<T> {
  for (let waited = false; ; waited = true) {
    try {
      return await write();
    } catch (err) {
      if (!isStoreUnavailable(err) || signal.aborted) throw err;
      if (!waited) onWait?.(err);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
