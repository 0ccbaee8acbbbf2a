import type { Connection } from 'mongoose';
import { isDuplicateKey } from './mongo-compat.ts';
import type { ConsumeRateLimit } from './rate-limit-counter.ts';

/**
 * Rate-limit counters in MongoDB, exact on MongoDB and on FerretDB v1 alike. A counter incremented
 * in place is not exact on FerretDB v1, which applies an update as a read and then a write of the
 * whole document (rate-limiter-flexible's Mongo limiter let 12 callers through a limit of 5 there),
 * so every step is an insert of a unique id, which both servers apply once:
 * - a window is a document `counter#n`, starting at the first point taken after the previous one
 *   ended (a fixed window per key, as rate-limiter-flexible keeps it); of two callers opening
 *   window n, one insert succeeds and both count in it;
 * - a point is a document `counter#n#i`, i below the limit: a caller starts at the number of points
 *   already taken and tries the next numbers until an insert succeeds or the budget is spent.
 * Opening a window deletes the counter's older ones and their points.
 */
interface WindowDoc {
  _id: string;
  counter: string;
  n: number;
  startedAt: Date;
}
interface PointDoc {
  _id: string;
  counter: string;
  n: number;
}

export function mongoRateLimit(connection: Connection): ConsumeRateLimit {
  const windows = connection.collection<WindowDoc>('rateLimitWindows');
  const points = connection.collection<PointDoc>('rateLimitPoints');
  let indexed: Promise<unknown> | undefined;
  // Points this process knows to be taken, per window: a start that skips a count.
  const taken = new Map<string, number>();

  const currentWindow = async (counter: string, windowMs: number, now: number): Promise<WindowDoc> => {
    for (;;) {
      const [latest] = await windows.find({ counter }).sort({ n: -1 }).limit(1).toArray();
      if (latest && latest.startedAt.getTime() + windowMs > now) return latest;
      const next: WindowDoc = { _id: `${counter}#${(latest?.n ?? 0) + 1}`, counter, n: (latest?.n ?? 0) + 1, startedAt: new Date(now) };
      try {
        await windows.insertOne(next);
      } catch (err) {
        if (isDuplicateKey(err)) continue; // another caller opened it: count in theirs
        throw err;
      }
      await Promise.all([windows.deleteMany({ counter, n: { $lt: next.n } }), points.deleteMany({ counter, n: { $lt: next.n } })]);
      return next;
    }
  };

  return async (key, limit, windowSeconds) => {
    await (indexed ??= Promise.all([windows.createIndex({ counter: 1, n: 1 }), points.createIndex({ counter: 1, n: 1 })]));
    const windowMs = windowSeconds * 1000;
    const now = Date.now();
    // The limit and window are part of the counter: a changed limit counts afresh.
    const counter = `${limit}/${windowSeconds}s:${key}`;
    const window = await currentWindow(counter, windowMs, now);
    const msBeforeReset = window.startedAt.getTime() + windowMs - now;
    let point = taken.get(window._id) ?? (await points.countDocuments({ counter, n: window.n }));
    for (; point < limit; point++) {
      try {
        await points.insertOne({ _id: `${window._id}#${point}`, counter, n: window.n });
      } catch (err) {
        if (isDuplicateKey(err)) continue;
        throw err;
      }
      remember(taken, window._id, point + 1);
      return { allowed: true, remaining: limit - point - 1, msBeforeReset };
    }
    remember(taken, window._id, limit);
    return { allowed: false, remaining: 0, msBeforeReset };
  };
}

/** Keeps the highest count seen, in a bounded map (the oldest entry goes: windows end anyway). */
function remember(taken: Map<string, number>, window: string, count: number): void {
  if ((taken.get(window) ?? 0) >= count) return;
  taken.delete(window);
  taken.set(window, count);
  if (taken.size > 10_000) taken.delete(taken.keys().next().value as string);
}
