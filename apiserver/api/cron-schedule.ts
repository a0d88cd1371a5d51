import { parseDuration } from './duration';
import { Zone } from './zoned-time';

/**
 * CronJob schedules as upstream parses them: robfig/cron v3's ParseStandard (five fields: minute,
 * hour, day of month, month, day of week; names jan-dec and sun-sat; `*`, `?`, ranges, lists and
 * steps; the @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly macros and
 * `@every <duration>`; an optional `TZ=zone ` or `CRON_TZ=zone ` prefix), with its error messages,
 * and its Next: the first activation after an instant, found field by field in the schedule's zone,
 * with Vixie cron's rule that a restricted day of month and a restricted day of week match
 * either (both must match when either is `*`).
 *
 * Not node-cron's parser (docs/workloads.md): it has no next-time function over an injected clock
 * and zone, ANDs day of month with day of week, and accepts (seconds, L, W, #) or refuses
 * (`5/15`) expressions differently from upstream.
 */

export interface CronSchedule {
  /** The first activation strictly after the instant (ms; whole seconds), or null when none comes within five years (robfig's zero time). */
  next(afterMs: number): number | null;
}

/** A schedule the parser refuses; the message is robfig/cron's. */
export class CronParseError extends Error {}

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MONTH_NAMES: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DOW_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = { min: 1, max: 12, names: MONTH_NAMES };
const DOW: Bounds = { min: 0, max: 6, names: DOW_NAMES };

/** The values a field allows, and whether it was written as `*` or `?` (robfig's starBit). */
interface FieldSet {
  bits: Uint8Array;
  star: boolean;
}

function fieldOf(b: Bounds, start: number, end: number, step: number, star: boolean): FieldSet {
  const bits = new Uint8Array(b.max + 1);
  for (let i = start; i <= end; i += step) bits[i] = 1;
  return { bits, star };
}

const all = (b: Bounds): FieldSet => fieldOf(b, b.min, b.max, 1, true);
const one = (b: Bounds, v: number): FieldSet => fieldOf(b, v, v, 1, false);

/** Go's strconv.Atoi followed by robfig's mustParseInt checks. */
function parseInt10(expr: string): number {
  if (!/^[+-]?[0-9]+$/.test(expr)) throw new CronParseError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  const n = Number(expr);
  if (!Number.isSafeInteger(n)) throw new CronParseError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: value out of range`);
  if (n < 0) throw new CronParseError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, b: Bounds): number {
  const named = b.names?.[expr.toLowerCase()];
  return named ?? parseInt10(expr);
}

/** robfig getRange: one comma-separated part of a field. */
function addRange(expr: string, b: Bounds, into: FieldSet): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0].split('-');
  const singleDigit = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = b.min;
    end = b.max;
    star = true;
  } else {
    start = parseIntOrName(lowAndHigh[0], b);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1], b);
    else throw new CronParseError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = parseInt10(rangeAndStep[1]);
    // "N/step" means "N-max/step".
    if (singleDigit) end = b.max;
    if (step > 1) star = false;
  } else if (rangeAndStep.length > 2) {
    throw new CronParseError(`too many slashes: ${expr}`);
  }
  if (start < b.min) throw new CronParseError(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new CronParseError(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new CronParseError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronParseError(`step of range should be a positive number: ${expr}`);
  for (let i = start; i <= end; i += step) into.bits[i] = 1;
  into.star ||= star;
}

function parseField(text: string, b: Bounds): FieldSet {
  const out: FieldSet = { bits: new Uint8Array(b.max + 1), star: false };
  for (const part of text.split(',')) addRange(part, b, out);
  return out;
}

interface Fields {
  minute: FieldSet;
  hour: FieldSet;
  dom: FieldSet;
  month: FieldSet;
  dow: FieldSet;
}

const DESCRIPTORS: Readonly<Record<string, () => Fields>> = {
  '@yearly': () => ({ minute: one(MINUTES, 0), hour: one(HOURS, 0), dom: one(DOM, 1), month: one(MONTHS, 1), dow: all(DOW) }),
  '@monthly': () => ({ minute: one(MINUTES, 0), hour: one(HOURS, 0), dom: one(DOM, 1), month: all(MONTHS), dow: all(DOW) }),
  '@weekly': () => ({ minute: one(MINUTES, 0), hour: one(HOURS, 0), dom: all(DOM), month: all(MONTHS), dow: one(DOW, 0) }),
  '@daily': () => ({ minute: one(MINUTES, 0), hour: one(HOURS, 0), dom: all(DOM), month: all(MONTHS), dow: all(DOW) }),
  '@hourly': () => ({ minute: one(MINUTES, 0), hour: all(HOURS), dom: all(DOM), month: all(MONTHS), dow: all(DOW) }),
};

const ALIASES: Readonly<Record<string, string>> = { '@annually': '@yearly', '@midnight': '@daily' };

/**
 * robfig/cron's ParseStandard. localZone is the zone of schedules without a TZ= prefix (upstream:
 * the controller manager's local zone, or the CronJob's timeZone through a prefix the controller
 * adds). Throws CronParseError with robfig's message.
 */
export function parseCronSchedule(spec: string, localZone: string): CronSchedule {
  if (spec.length === 0) throw new CronParseError('empty spec string');
  let zoneName = localZone;
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const eq = spec.indexOf('=');
    zoneName = space < 0 ? spec.slice(eq + 1) : spec.slice(eq + 1, space);
    try {
      Zone.load(zoneName);
    } catch (err) {
      throw new CronParseError(`provided bad location ${zoneName}: ${(err as Error).message}`);
    }
    spec = space < 0 ? '' : spec.slice(space).trim();
  }
  const zone = Zone.load(zoneName);
  if (spec.startsWith('@')) return descriptor(spec, zone);
  const parts = spec.split(/\s+/).filter((s) => s !== '');
  if (parts.length !== 5) throw new CronParseError(`expected exactly 5 fields, found ${parts.length}: [${parts.join(' ')}]`);
  const [minute, hour, dom, month, dow] = parts as [string, string, string, string, string];
  return new SpecSchedule({ minute: parseField(minute, MINUTES), hour: parseField(hour, HOURS), dom: parseField(dom, DOM), month: parseField(month, MONTHS), dow: parseField(dow, DOW) }, zone);
}

function descriptor(spec: string, zone: Zone): CronSchedule {
  const fields = DESCRIPTORS[ALIASES[spec] ?? spec];
  if (fields) return new SpecSchedule(fields(), zone);
  const every = '@every ';
  if (spec.startsWith(every)) {
    let ms: number;
    try {
      ms = parseDuration(spec.slice(every.length));
    } catch {
      throw new CronParseError(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(spec.slice(every.length))}`);
    }
    // robfig Every: at least a second, whole seconds.
    const delay = Math.max(1000, ms - (ms % 1000));
    return { next: (after) => Math.floor(after / 1000) * 1000 + delay };
  }
  throw new CronParseError(`unrecognized descriptor: ${spec}`);
}

const HOUR_MS = 3_600_000;
const mod = (a: number, n: number) => ((a % n) + n) % n;

/** robfig's SpecSchedule: fields in a zone; second 0. */
class SpecSchedule implements CronSchedule {
  constructor(
    private readonly f: Fields,
    private readonly zone: Zone,
  ) {}

  private dayMatches(day: number, weekday: number): boolean {
    const dom = this.f.dom.bits[day] === 1;
    const dow = this.f.dow.bits[weekday] === 1;
    return this.f.dom.star || this.f.dow.star ? dom && dow : dom || dow;
  }

  /** robfig SpecSchedule.Next, step for step (each loop restarts from the year when a field wraps). */
  next(afterMs: number): number | null {
    const z = this.zone;
    const { minute, hour, month } = this.f;
    let t = Math.floor(afterMs / 1000) * 1000 + 1000;
    let added = false;
    const yearLimit = z.fields(t).year + 5;
    wrap: for (;;) {
      let w = z.fields(t);
      if (w.year > yearLimit) return null;
      while (month.bits[w.month] !== 1) {
        if (!added) {
          added = true;
          t = z.date(w.year, w.month, 1, 0, 0, 0);
          w = z.fields(t);
        }
        t = z.date(w.year, w.month + 1, w.day, w.hour, w.minute, w.second);
        w = z.fields(t);
        if (w.month === 1) continue wrap;
      }
      while (!this.dayMatches(w.day, w.weekday)) {
        if (!added) {
          added = true;
          t = z.date(w.year, w.month, w.day, 0, 0, 0);
          w = z.fields(t);
        }
        t = z.date(w.year, w.month, w.day + 1, w.hour, w.minute, w.second);
        w = z.fields(t);
        // Midnight may not exist on a DST change: come back to 0 h (23 h forward, 1 h back).
        if (w.hour !== 0) {
          t += (w.hour > 12 ? 24 - w.hour : -w.hour) * HOUR_MS;
          w = z.fields(t);
        }
        if (w.day === 1) continue wrap;
      }
      while (hour.bits[w.hour] !== 1) {
        if (!added) {
          added = true;
          t = z.date(w.year, w.month, w.day, w.hour, 0, 0);
        }
        t += HOUR_MS;
        w = z.fields(t);
        if (w.hour === 0) continue wrap;
      }
      while (minute.bits[w.minute] !== 1) {
        if (!added) {
          added = true;
          t -= mod(t, 60_000);
        }
        t += 60_000;
        w = z.fields(t);
        if (w.minute === 0) continue wrap;
      }
      // Standard schedules fire at second 0.
      while (w.second !== 0) {
        if (!added) {
          added = true;
          t -= mod(t, 1000);
        }
        t += 1000;
        w = z.fields(t);
        if (w.second === 0) continue wrap;
      }
      return t;
    }
  }
}
