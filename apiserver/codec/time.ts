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

/** Seconds and nanoseconds of an RFC 3339 time, or undefined when s is not one. */
export function parseTime(s: string, micro: boolean): { seconds: number; nanos: number } | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: the latter reads years 0-99 as 1900-1999.
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  let seconds = Math.floor(d.getTime() / 1000);
  if (!m[8]) seconds -= (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 3600 + Number(m[11]) * 60);
  let nanos = 0;
  if (micro && m[7]) nanos = Number(m[7].padEnd(9, '0').slice(0, 6)) * 1000;
  return { seconds, nanos };
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
