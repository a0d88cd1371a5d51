import { protobufError } from './reader';

/**
 * metav1.Time and MicroTime between their JSON form (RFC 3339) and their protobuf form
 * (Timestamp: seconds since the epoch, nanoseconds). As upstream: Time keeps whole seconds
 * (its protobuf nanos are written 0 and ignored on read), MicroTime keeps microseconds.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Go's time range for these types: years 0001 through 9999. */
const MIN_SECONDS = -62135596800;
const MAX_SECONDS = 253402300799;

/** Seconds and nanoseconds of an RFC 3339 time, or undefined when s is not one (a real calendar date). */
export function parseTime(s: string, micro: boolean): { seconds: number; nanos: number } | undefined {
  // Fast path for the form the server itself writes ("2025-03-01T12:00:00Z"): no regular expression.
  if (s.length === 20 && s.charCodeAt(19) === 90 /* Z */ && s.charCodeAt(10) === 84 /* T */) {
    const seconds = canonicalSeconds(s);
    return seconds === undefined ? undefined : { seconds, nanos: 0 };
  }
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  let seconds = epochSeconds(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (seconds === undefined) return undefined;
  if (!m[8]) seconds -= (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 3600 + Number(m[11]) * 60);
  let nanos = 0;
  if (micro && m[7]) nanos = Number(m[7].padEnd(9, '0').slice(0, 6)) * 1000;
  return { seconds, nanos };
}

/** "YYYY-MM-DDTHH:MM:SSZ" as seconds since the epoch, or undefined when a field is not digits or out of range. */
function canonicalSeconds(s: string): number | undefined {
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  if (s[4] !== '-' || s[7] !== '-' || s[13] !== ':' || s[16] !== ':') return undefined;
  return epochSeconds(year, month, day, hour, minute, second);
}

/** Seconds since the epoch of a UTC date and time, or undefined unless every field is in range (as Go's time.Parse). */
function epochSeconds(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  return daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The decimal number of s[at, at+n), or -1 when a character is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (the well-known civil-from-days inverse). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The JSON form upstream writes: UTC, whole seconds for Time, six fraction digits for MicroTime. */
export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  if (!Number.isFinite(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) throw protobufError(`time of ${seconds} seconds is out of range`);
  const d = new Date(seconds * 1000);
  const year = d.getUTCFullYear();
  const date = `${String(year).padStart(4, '0')}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  if (!micro) return `${date}Z`;
  if (nanos < 0 || nanos > 999999999) throw protobufError(`nanos ${nanos} out of range`);
  return `${date}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
