import { Schema, type Connection } from 'mongoose';
import { upsertOnce } from './mongo-compat.ts';
import { USAGE_SCOPES, usageScopes } from './rules.ts';
import type { UsageEvent, UsageScope } from './store.ts';
import { utcDay, type UsageDayRow, type UsageHistoryStore } from './usage-history.ts';

/** Daily usage buckets in MongoDB: one upserted document per day, scope and id, incremented in place. */
interface UsageDayDoc {
  day: string;
  scope: UsageScope;
  id: string;
  accountId: string;
  captures: number;
  failures: number;
  bytes: number;
}

const usageDaySchema = new Schema<UsageDayDoc>(
  {
    day: { type: String, required: true },
    scope: { type: String, required: true, enum: USAGE_SCOPES },
    id: { type: String, required: true },
    accountId: { type: String, required: true },
    captures: { type: Number, default: 0 },
    failures: { type: Number, default: 0 },
    bytes: { type: Number, default: 0 },
  },
  { versionKey: false },
);
usageDaySchema.index({ day: 1, scope: 1, id: 1 }, { unique: true });
usageDaySchema.index({ accountId: 1, day: 1 });

export async function mongoUsageHistory(connection: Connection): Promise<UsageHistoryStore & { recordDay(event: UsageEvent): Promise<void> }> {
  const UsageDays = connection.model<UsageDayDoc>('UsageDay', usageDaySchema, 'usageDaily');
  await UsageDays.createIndexes();
  return {
    async recordDay(event) {
      const day = utcDay(new Date());
      const inc = { captures: event.outcome === 'capture' ? 1 : 0, failures: event.outcome === 'failure' ? 1 : 0, bytes: event.bytes };
      for (const [scope, id] of usageScopes(event)) {
        await upsertOnce(() => UsageDays.updateOne({ day, scope, id }, { $inc: inc, $setOnInsert: { accountId: event.accountId } }, { upsert: true }));
      }
    },
    async listUsageHistory(accountId, sinceDay) {
      const docs = await UsageDays.find({ accountId, day: { $gte: sinceDay } }).sort({ day: 1, scope: 1, id: 1 }).lean();
      return docs.map((doc): UsageDayRow => ({ day: doc.day, scope: doc.scope, id: doc.id, captures: doc.captures, failures: doc.failures, bytes: doc.bytes }));
    },
  };
}
