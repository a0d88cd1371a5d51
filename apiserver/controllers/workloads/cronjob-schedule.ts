import type { CronSchedule } from '../../api/cron-schedule';
import type { KObject } from '../../api/types';
import { Zone } from '../../api/zoned-time';
import { num, rec, str } from '../../registry/obj-access';

/**
 * The CronJob controller's schedule arithmetic (upstream pkg/controller/cronjob/utils.go):
 * which scheduled time a sync should run now, how many were missed, and when to look again.
 * Times are milliseconds since the epoch.
 */

/** Upstream nextScheduleDelta: a sync is queued this long after the scheduled time. */
export const NEXT_SCHEDULE_DELTA_MS = 100;

export type Missed = 'none' | 'few' | 'many';

export interface MostRecent {
  /** The last schedule time, else the creation time (moved up to now - startingDeadlineSeconds when asked). */
  earliest: number;
  /** The most recent scheduled time not after now, if any since earliest. */
  mostRecent?: number;
  missed: Missed;
  /** The schedule cannot fire at two distinct times (e.g. the 30th of February). */
  error?: string;
}

function specOf(cj: KObject): Record<string, unknown> {
  return rec(cj.spec) ?? {};
}

/**
 * Upstream mostRecentScheduleTime. The missed count is estimated from the interval between the
 * first two times after earliest, as upstream does, so a controller down for years does not walk
 * every missed time; more than 100 is "many" (a warning event, at most one catch-up run).
 */
export function mostRecentScheduleTime(cj: KObject, nowMs: number, sched: CronSchedule, includeStartingDeadline: boolean): MostRecent {
  const last = Date.parse(str(rec(cj.status)?.lastScheduleTime) ?? '');
  let earliest = Number.isFinite(last) ? last : Date.parse(cj.metadata.creationTimestamp ?? '') || 0;
  const deadline = num(specOf(cj).startingDeadlineSeconds);
  if (includeStartingDeadline && deadline !== undefined) earliest = Math.max(earliest, nowMs - deadline * 1000);
  const t1 = sched.next(earliest);
  const t2 = t1 === null ? null : sched.next(t1);
  if (t1 !== null && nowMs < t1) return { earliest, missed: 'none' };
  if (t1 !== null && t2 !== null && nowMs < t2) return { earliest, mostRecent: t1, missed: 'none' };
  const interval = t1 === null || t2 === null ? 0 : Math.round((t2 - t1) / 1000);
  if (interval < 1) return { earliest, missed: 'none', error: 'time difference between two schedules is less than 1 second' };
  const elapsed = Math.trunc((nowMs - t1!) / 1000);
  const missedCount = Math.trunc(elapsed / interval) + 1;
  // Start one interval before the estimate and let the schedule find the exact times (irregular
  // schedules such as "30 6-16/4 * * 1-5" have uneven gaps).
  let t: number | null = sched.next(t1! + (missedCount - 2) * interval * 1000);
  let mostRecent: number | undefined;
  for (; t !== null && t <= nowMs; t = sched.next(t)) mostRecent = t;
  const missed: Missed = missedCount > 100 ? 'many' : missedCount > 0 ? 'few' : 'none';
  return mostRecent === undefined ? { earliest, missed } : { earliest, mostRecent, missed };
}

/** Upstream nextScheduleTimeDuration: how long until the sync after the next scheduled time. */
export function nextScheduleTimeDuration(cj: KObject, nowMs: number, sched: CronSchedule): number {
  const r = mostRecentScheduleTime(cj, nowMs, sched, false);
  let from: number;
  if (r.error !== undefined) from = nowMs;
  else if (r.mostRecent === undefined) from = r.missed === 'none' ? r.earliest : nowMs;
  else from = r.mostRecent;
  const next = sched.next(from);
  // No time within five years: look again in a day rather than never (Go's zero time would make the wait negative).
  return next === null ? 24 * 3600_000 : next + NEXT_SCHEDULE_DELTA_MS - nowMs;
}

/** Upstream getJobName: the CronJob's name and the scheduled time in minutes since the epoch. */
export function jobNameFor(cj: KObject, scheduledMs: number): string {
  return `${cj.metadata.name}-${Math.floor(scheduledMs / 60_000)}`;
}

/** Go's time.Format(time.RFC3339) of the instant in the zone ("Z" for a zero offset). */
export function rfc3339In(ms: number, zone: Zone): string {
  const f = zone.fields(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const offsetMin = Math.round(zone.offsetMs(ms) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const offset = offsetMin === 0 ? 'Z' : `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}T${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}${offset}`;
}
