/**
 * A resource opened on its first use rather than at start-up (a cache directory, a bucket), so that
 * an install that never uses it needs none of it. An open that fails is tried again by the next use.
 */
export interface OpenedOnFirstUse<T> {
  /** The resource, opening it now when nothing has yet. */
  get(): Promise<T>;
  /** The resource if an open has begun and succeeds, else undefined (for close and size reports). */
  ifOpened(): Promise<T | undefined>;
}

export function openOnFirstUse<T>(open: () => Promise<T>): OpenedOnFirstUse<T> {
  let opening: Promise<T> | undefined;
  return {
    get: () =>
      (opening ??= open().catch((err: unknown) => {
        opening = undefined;
        throw err;
      })),
    ifOpened: async () => opening?.catch(() => undefined),
  };
}
