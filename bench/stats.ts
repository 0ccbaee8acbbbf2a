export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export const median = (values: number[]) => percentile(values, 50);

/** Runs `task` `total` times with at most `concurrency` at once; returns the durations and the rate per second. */
export async function runConcurrently(total: number, concurrency: number, task: (worker: number) => Promise<void>) {
  const durations: number[] = [];
  let started = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (started < total) {
        started += 1;
        const t0 = performance.now();
        await task(worker);
        durations.push(performance.now() - t0);
      }
    }),
  );
  const elapsedS = (performance.now() - begin) / 1000;
  return { durations, perSecond: total / elapsedS };
}

export const fmt = (n: number, digits = 1) => n.toFixed(digits);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
