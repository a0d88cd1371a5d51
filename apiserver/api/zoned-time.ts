/**
 * Wall-clock time in an IANA time zone through Intl (the tz database Node ships), for the cron
 * schedules of CronJobs: the few operations of Go's time package that robfig/cron's Next uses
 * (the fields of an instant in a zone, and time.Date's wall time → instant), on whole seconds.
 */

/** Go's time.LoadLocation error text, which upstream's validation and controller report. */
export function unknownTimeZone(name: string): string {
  return `unknown time zone ${name}`;
}

export interface WallTime {
  year: number;
  /** 1-12. */
  month: number;
  /** 1-31. */
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 (Sunday) - 6. */
  weekday: number;
}

/** The zone the process runs in (upstream: the controller manager's local time zone). */
export function processTimeZone(): string {
  return new Intl.DateTimeFormat('en-US').resolvedOptions().timeZone || 'UTC';
}

const zones = new Map<string, Zone>();

export class Zone {
  private readonly fmt: Intl.DateTimeFormat | undefined;

  private constructor(readonly name: string) {
    this.fmt =
      name === 'UTC'
        ? undefined
        : new Intl.DateTimeFormat('en-US', { timeZone: name, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  }

  /**
   * The zone named as Go's time.LoadLocation takes it: "" and "UTC" are UTC; other names must be
   * in the tz database, spelled with its case (Go opens zoneinfo files, whose names are
   * case-sensitive; Intl would accept "america/new_york"). Throws Error("unknown time zone x").
   */
  static load(name: string): Zone {
    const key = name === '' ? 'UTC' : name;
    const cached = zones.get(key);
    if (cached) return cached;
    if (key !== 'UTC') {
      let resolved: string;
      try {
        resolved = new Intl.DateTimeFormat('en-US', { timeZone: key }).resolvedOptions().timeZone;
      } catch {
        throw new Error(unknownTimeZone(name));
      }
      // Intl matches names case-insensitively; a name that only differs in case is not a file Go would find.
      if (resolved !== key && resolved.toLowerCase() === key.toLowerCase()) throw new Error(unknownTimeZone(name));
    }
    const z = new Zone(key);
    zones.set(key, z);
    return z;
  }

  /** The wall-clock fields of an instant (ms since the epoch) in this zone. */
  fields(ms: number): WallTime {
    if (!this.fmt) return utcFields(ms);
    const p: Record<string, number> = {};
    for (const part of this.fmt.formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
    const weekday = new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay();
    return { year: p.year, month: p.month, day: p.day, hour: p.hour, minute: p.minute, second: p.second, weekday };
  }

  /** Milliseconds east of UTC at the instant. */
  offsetMs(ms: number): number {
    const whole = Math.floor(ms / 1000) * 1000;
    const f = this.fields(whole);
    return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) - whole;
  }

  /**
   * Go's time.Date(year, month, day, hour, min, sec, 0, zone): out-of-range fields normalise
   * (month 13 is January of the next year), and a wall time that does not exist or exists twice
   * (a DST change) resolves as Go resolves it: the offset in force at the wall time read as UTC,
   * unless the instant that gives falls under another offset, whose result is used instead.
   */
  date(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
    const wall = Date.UTC(year, month - 1, day, hour, minute, second);
    if (!this.fmt) return wall;
    const first = this.offsetMs(wall);
    const utc = wall - first;
    const second2 = this.offsetMs(utc);
    return second2 === first ? utc : wall - second2;
  }
}

function utcFields(ms: number): WallTime {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: d.getUTCDay(),
  };
}
