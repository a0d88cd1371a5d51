/**
 * Go's time.Duration text, as meta/v1 Duration carries it in JSON ("15s", "1m30s", "1.5s",
 * "500ms"), to and from nanoseconds (its protobuf form). Exact up to 2^53 ns (about 104 days).
 */

const UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** time.Duration.String(). */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let u = Math.abs(ns);
  if (u < 1e9) {
    const [unit, div] = u < 1e3 ? ['ns', 1] : u < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    return `${sign}${u / div}${unit}`;
  }
  const h = Math.floor(u / 3600e9);
  u -= h * 3600e9;
  const m = Math.floor(u / 60e9);
  u -= m * 60e9;
  const s = `${u / 1e9}s`;
  return sign + (h > 0 ? `${h}h${m}m${s}` : m > 0 ? `${m}m${s}` : s);
}

/** time.ParseDuration: nanoseconds, or undefined when the text is not a duration. */
export function parseGoDuration(text: string): number | undefined {
  const m = /^([+-]?)(.+)$/.exec(text);
  if (!m || m[2] === '') return undefined;
  if (m[2] === '0') return 0;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < m[2].length) {
    part.lastIndex = at;
    const p = part.exec(m[2]);
    if (!p) return undefined;
    total += Number(p[1]) * UNITS[p[2]];
    at = part.lastIndex;
  }
  return Math.round(m[1] === '-' ? -total : total);
}
