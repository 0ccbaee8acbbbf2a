import type { UsageRow } from './store.ts';

/**
 * Usage by UTC day, for the dashboard's chart: the same counts as listUsage, bucketed per day.
 * recordUsage writes the day's bucket in the same write as the totals.
 */
export interface UsageDayRow extends UsageRow {
  /** YYYY-MM-DD, UTC. */
  day: string;
}

export interface UsageHistoryStore {
  /** The account's buckets from `sinceDay` (YYYY-MM-DD, inclusive), by day, then scope and id. */
  listUsageHistory(accountId: string, sinceDay: string): Promise<UsageDayRow[]>;
}

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}
