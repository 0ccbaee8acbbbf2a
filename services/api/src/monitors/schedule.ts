/**
 * Monitors' schedules: five-field cron (or @hourly, @daily...) read in an IANA time zone, with
 * croner. The same grammar the PageMonitor CRD accepts (crds/pagemonitor.yaml), checked here for
 * what a pattern cannot say: a time zone that exists, and a schedule that fires at all.
 */
import { Cron } from 'croner';
import { BadRequest } from '../../../../lib/errors.ts';

export const MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly'] as const;

function cronOf(schedule: string, timeZone: string): Cron {
  return new Cron(schedule, { timezone: timeZone, paused: true, mode: '5-part', sloppyRanges: true, legacyMode: true });
}

/** Throws a BadRequest naming the problem; answers the parsed schedule otherwise. */
export function checkSchedule(schedule: string, timeZone: string): Cron {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    throw new BadRequest(`timeZone ${JSON.stringify(timeZone)} is not an IANA time zone (e.g. UTC, Europe/Paris)`);
  }
  const trimmed = schedule.trim();
  if (!trimmed.startsWith('@') && trimmed.split(/\s+/).length !== 5) {
    throw new BadRequest(`schedule ${JSON.stringify(schedule)} must have five fields (minute hour day-of-month month day-of-week) or be one of ${MACROS.join(', ')}`);
  }
  let cron: Cron;
  try {
    cron = cronOf(trimmed, timeZone);
  } catch (err) {
    throw new BadRequest(`schedule ${JSON.stringify(schedule)} is not a cron expression: ${(err as Error).message}`);
  }
  if (cron.nextRun(new Date()) === null) throw new BadRequest(`schedule ${JSON.stringify(schedule)} never fires`);
  return cron;
}

/** The first time the schedule fires strictly after `after`; null when it never does again. */
export function nextRunAfter(schedule: string, timeZone: string, after: Date): Date | null {
  return cronOf(schedule.trim(), timeZone).nextRun(after);
}

/** Seconds between the next two runs after `from`: the interval "has not run for twice its interval" uses. */
export function intervalSeconds(schedule: string, timeZone: string, from: Date): number | undefined {
  const [first, second] = cronOf(schedule.trim(), timeZone).nextRuns(2, from);
  return first && second ? (second.getTime() - first.getTime()) / 1000 : undefined;
}
