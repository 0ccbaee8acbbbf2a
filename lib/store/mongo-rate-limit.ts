import type { Connection } from 'mongoose';
import { isDuplicateKey } from './mongo-compat.ts';
import type { ConsumeRateLimit } from './rate-limit-counter.ts';

/**
 * Rate-limit counters in MongoDB, exact on MongoDB and on FerretDB v1 alike: a fixed window per key,
 * and one document per point taken, whose id is the counter, the window and the point's number.
 * An id is inserted once, by one caller, on every server; a counter incremented in place is not
 * exact on FerretDB v1, which applies an update as a read and then a write of the whole document
 * (rate-limiter-flexible's Mongo limiter let 12 callers through a limit of 5 there). A caller starts
 * at the number of points already taken and tries the next numbers until an insert succeeds or the
 * budget is spent. The first point of a window deletes the counter's older windows.
 */
interface PointDoc {
  _id: string;
  counter: string;
  windowStart: Date;
}

export function mongoRateLimit(connection: Connection): ConsumeRateLimit {
  const points = connection.collection<PointDoc>('rateLimitPoints');
  let indexed: Promise<unknown> | undefined;
  // Points this process knows to be taken, per counter and window: a start that skips a count.
  const taken = new Map<string, number>();
  return async (key, limit, windowSeconds) => {
    await (indexed ??= points.createIndex({ counter: 1, windowStart: 1 }));
    const windowMs = windowSeconds * 1000;
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    const msBeforeReset = windowStart + windowMs - now;
    // The limit and window are part of the counter: a changed limit counts afresh.
    const counter = `${limit}/${windowSeconds}s:${key}`;
    const window = `${counter}@${windowStart}`;
    const at = new Date(windowStart);
    let point = taken.get(window) ?? (await points.countDocuments({ counter, windowStart: at }));
    for (; point < limit; point++) {
      try {
        await points.insertOne({ _id: `${window}#${point}`, counter, windowStart: at });
      } catch (err) {
        if (isDuplicateKey(err)) continue;
        throw err;
      }
      remember(taken, window, point + 1);
      if (point === 0) await points.deleteMany({ counter, windowStart: { $lt: at } });
      return { allowed: true, remaining: limit - point - 1, msBeforeReset };
    }
    remember(taken, window, limit);
    return { allowed: false, remaining: 0, msBeforeReset };
  };
}

/** Keeps the highest count seen; a bounded map (the oldest entry goes), windows end anyway. */
function remember(taken: Map<string, number>, window: string, count: number): void {
  if ((taken.get(window) ?? 0) >= count) return;
  taken.delete(window);
  taken.set(window, count);
  if (taken.size > 10_000) taken.delete(taken.keys().next().value as string);
}
