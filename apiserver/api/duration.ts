/**
 * Go duration strings ("10s", "5m0s", "1h30m", "1.5h", "300ms"), the format the kubelet's
 * configuration uses for every metav1.Duration field. Parsed to milliseconds.
 */

const unitNs: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign, accepted by Go
  'μs': 1e3, // U+03BC Greek mu, accepted by Go
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Parses a Go duration string to milliseconds (possibly fractional for ns/us units); throws Error with a one-line reason. */
export function parseDuration(text: string): number {
  const orig = text;
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  // Go accepts a bare "0" (with optional sign) and nothing else without a unit.
  if (s === '0') return 0;
  if (s === '') throw new Error(`invalid duration ${JSON.stringify(orig)}`);
  let totalNs = 0;
  while (s !== '') {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const whole = num[1] ?? '';
    const frac = num[2];
    if (whole === '' && (frac === undefined || frac === '')) throw new Error(`invalid duration ${JSON.stringify(orig)}`);
    s = s.slice(num[0].length);
    const unitMatch = /^[^\d.]+/.exec(s);
    if (!unitMatch) throw new Error(`missing unit in duration ${JSON.stringify(orig)}`);
    const unit = unitMatch[0];
    const scale = unitNs[unit];
    if (scale === undefined) throw new Error(`unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(orig)}`);
    s = s.slice(unit.length);
    const value = Number(`${whole || '0'}.${frac || '0'}`);
    totalNs += value * scale;
  }
  // Go rejects durations beyond int64 nanoseconds (about 290 years).
  if (totalNs > 9.223372036854776e18) throw new Error(`invalid duration ${JSON.stringify(orig)}: out of range`);
  return (sign * totalNs) / 1e6;
}

/** Formats milliseconds as Go's time.Duration.String does for whole milliseconds ("5m0s", "1h0m0s", "300ms", "0s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  let out: string;
  if (rest < 1000) {
    out = `${trimNumber(rest)}ms`;
  } else {
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const sec = `${trimNumber(rest / 1000)}s`;
    out = h > 0 ? `${h}h${m}m${sec}` : m > 0 ? `${m}m${sec}` : sec;
  }
  return neg ? '-' + out : out;
}

function trimNumber(n: number): string {
  // Up to 9 fractional digits like Go, without trailing zeros.
  return n.toFixed(9).replace(/\.?0+$/, '');
}
